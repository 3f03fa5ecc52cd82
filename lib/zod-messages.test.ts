import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { humanIssueMessage } from '@/lib/zod-messages'

/** The message of the first issue when `value` is parsed with the human messages. */
function messageFor(schema: z.ZodType, value: unknown): string | undefined {
  const r = schema.safeParse(value, { error: humanIssueMessage })
  return r.success ? undefined : r.error.issues[0]?.message
}

describe('zod issues in plain words', () => {
  it.each([
    ['a number below its minimum', z.coerce.number().int().min(1).max(50), '0', 'Enter a number of at least 1.'],
    ['a number above its maximum', z.coerce.number().min(0).max(2), '3', 'Enter a number of at most 2.'],
    ['a number that must be positive', z.number().positive(), -1, 'Enter a number greater than 0.'],
    ['text that is no number', z.coerce.number(), 'four', 'Enter a number.'],
    ['a fraction where a whole number goes', z.coerce.number().int(), '1.5', 'Enter a whole number.'],
    ['a missing field', z.object({ name: z.string() }), {}, 'This field is required.'],
    ['empty text', z.string().min(1), '', 'This field is required.'],
    ['text too short', z.string().min(3), 'ab', 'Use at least 3 characters.'],
    ['text too long', z.string().max(5), 'abcdefg', 'Use at most 5 characters.'],
    ['an email', z.email(), 'nope', 'Enter an email address, like name@example.org.'],
    ['a web address', z.url(), 'nope', 'Enter a web address, like https://example.org.'],
    ['a choice', z.enum(['proxy', 'expert', 'llm']), 'robot', 'Choose one of: proxy, expert, llm.'],
    ['an empty list', z.array(z.string()).min(1), [], 'Choose at least one.'],
    ['a long list', z.array(z.string()).max(2), ['a', 'b', 'c'], 'Choose at most 2.'],
    ['a yes or no', z.boolean(), 'maybe', 'Choose yes or no.'],
    ['a pattern', z.string().regex(/^a/), 'b', 'This is not in the format asked for.'],
  ])('%s', (_what, schema, value, expected) => {
    const message = messageFor(schema, value)
    expect(message).toBe(expected)
    // Never zod's own wording ("Too small: expected number to be >=1").
    expect(message).not.toMatch(/expected \w|Too small|Too big|>=|<=|Invalid/)
  })

  it("a schema's own message wins over the plain words", () => {
    const schema = z.object({ name: z.string({ error: 'Name the experiment.' }).min(1, 'Name the experiment.') })
    expect(messageFor(schema, {})).toBe('Name the experiment.')
    expect(messageFor(schema, { name: '' })).toBe('Name the experiment.')
  })
})
