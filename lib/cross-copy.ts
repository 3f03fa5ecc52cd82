/**
 * `instanceof` across copies of a module. Next bundles a module once per server layer (pages, route
 * handlers, instrumentation), so one process can hold several copies of an error class: the protocol
 * plugins are loaded through the entry point's copy (lib/server/protocols/bind.ts), and an error their
 * code throws failed `err instanceof ProtocolError` in a route handler's copy, which then answered 500
 * instead of the error's own status. A class marked here is recognised by every copy: its prototype
 * carries a brand shared through the global symbol registry, and `instanceof` on the marked class checks
 * that brand. Subclasses keep the ordinary check (unless marked themselves).
 */
export function crossCopy<C extends abstract new (...args: never[]) => object>(cls: C, name: string): C {
  const brand = Symbol.for(`parley.class.${name}`)
  Object.defineProperty(cls.prototype, brand, { value: true })
  Object.defineProperty(cls, Symbol.hasInstance, {
    value(this: unknown, x: unknown): boolean {
      if (Function.prototype[Symbol.hasInstance].call(this, x)) return true
      return this === cls && typeof x === 'object' && x !== null && (x as Record<symbol, unknown>)[brand] === true
    },
  })
  return cls
}
