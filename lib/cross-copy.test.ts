import { describe, expect, it } from 'vitest'
import { crossCopy } from './cross-copy'

/** Two copies of one module's class, as two Next server layers load them. */
function copyOfModule() {
  class Failure extends Error {
    constructor(readonly status: number) {
      super('failed')
    }
  }
  crossCopy(Failure, 'test.Failure')
  class Narrower extends Failure {}
  return { Failure, Narrower }
}

describe('crossCopy', () => {
  it('an error of one copy is an instance of the class of another copy', () => {
    const a = copyOfModule()
    const b = copyOfModule()
    expect(a.Failure).not.toBe(b.Failure)
    expect(new a.Failure(409) instanceof b.Failure).toBe(true)
    expect(new a.Narrower(404) instanceof b.Failure).toBe(true)
  })

  it('nothing else passes, and a subclass keeps the ordinary check', () => {
    const a = copyOfModule()
    const b = copyOfModule()
    expect(new Error('x') instanceof a.Failure).toBe(false)
    expect((null as unknown as object) instanceof a.Failure).toBe(false)
    expect({ status: 409 } instanceof a.Failure).toBe(false)
    // Narrower is not marked: only its own copy's instances are Narrowers.
    expect(new a.Narrower(1) instanceof a.Narrower).toBe(true)
    expect(new b.Narrower(1) instanceof a.Narrower).toBe(false)
    expect(new a.Failure(1) instanceof a.Narrower).toBe(false)
  })

  it('without the mark, copies do not recognise each other (why it exists)', () => {
    const make = () => class Plain extends Error {}
    expect(new (make())() instanceof make()).toBe(false)
  })
})
