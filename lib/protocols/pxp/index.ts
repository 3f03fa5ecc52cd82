export * from './agent'
export * from './protocol'
export * from './tags'
