export * from '@/protocols/labelling/core/items'
export * from '@/protocols/labelling/core/protocol'
export * from '@/protocols/labelling/core/qrels'
export * from '@/protocols/labelling/core/schema'
