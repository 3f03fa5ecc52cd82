import type { z } from 'zod'

/**
 * Plain words for zod's validation issues ("Enter a number of at least 1." instead of "Too small:
 * expected number to be >=1"), installed as zod's `customError` (lib/server/operation.ts), so every
 * form, REST answer and CLI message says what to do. A message a schema sets itself always wins
 * (zod asks this map only when the schema has none); an issue this map does not know keeps zod's.
 */
export function humanIssueMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined || issue.input === null) return 'This field is required.'
      const expected = issue.expected
      if (expected === 'number' || expected === 'bigint' || expected === 'nan') return 'Enter a number.'
      if (expected === 'int') return 'Enter a whole number.'
      if (expected === 'boolean') return 'Choose yes or no.'
      if (expected === 'string') return 'Enter text.'
      if (expected === 'date') return 'Enter a date.'
      if (expected === 'array' || expected === 'set') return 'Choose one or more.'
      return undefined
    }
    case 'too_small': {
      const min = issue.minimum
      const inclusive = issue.inclusive !== false
      switch (issue.origin) {
        case 'number':
        case 'int':
        case 'bigint':
          return inclusive ? `Enter a number of at least ${min}.` : `Enter a number greater than ${min}.`
        case 'string':
          if (issue.exact) return `Use exactly ${min} ${plural(min, 'character')}.`
          return Number(min) <= 1 ? 'This field is required.' : `Use at least ${min} characters.`
        case 'array':
        case 'set':
          return Number(min) <= 1 ? 'Choose at least one.' : `Choose at least ${min}.`
        case 'date':
          return `Choose a date on or after ${new Date(Number(min)).toISOString().slice(0, 10)}.`
        default:
          return undefined
      }
    }
    case 'too_big': {
      const max = issue.maximum
      const inclusive = issue.inclusive !== false
      switch (issue.origin) {
        case 'number':
        case 'int':
        case 'bigint':
          return inclusive ? `Enter a number of at most ${max}.` : `Enter a number less than ${max}.`
        case 'string':
          if (issue.exact) return `Use exactly ${max} ${plural(max, 'character')}.`
          return `Use at most ${max} ${plural(max, 'character')}.`
        case 'array':
        case 'set':
          return `Choose at most ${max}.`
        case 'date':
          return `Choose a date on or before ${new Date(Number(max)).toISOString().slice(0, 10)}.`
        default:
          return undefined
      }
    }
    case 'invalid_format':
      switch (issue.format) {
        case 'email':
          return 'Enter an email address, like name@example.org.'
        case 'url':
          return 'Enter a web address, like https://example.org.'
        case 'uuid':
        case 'guid':
        case 'cuid':
        case 'cuid2':
          return 'This is not a valid id.'
        case 'datetime':
        case 'date':
          return 'Enter a date.'
        case 'starts_with':
          return `Start with “${String(issue.prefix)}”.`
        case 'ends_with':
          return `End with “${String(issue.suffix)}”.`
        case 'includes':
          return `Include “${String(issue.includes)}”.`
        default:
          return 'This is not in the format asked for.'
      }
    case 'invalid_value': {
      const values = issue.values.map((v) => String(v))
      if (values.length === 1) return `This must be “${values[0]}”.`
      return `Choose one of: ${values.join(', ')}.`
    }
    case 'not_multiple_of':
      return `Enter a multiple of ${issue.divisor}.`
    case 'unrecognized_keys':
      return `Unexpected ${plural(issue.keys.length, 'field')}: ${issue.keys.join(', ')}.`
    default:
      return undefined
  }
}

function plural(n: number | bigint, word: string): string {
  return Number(n) === 1 ? word : `${word}s`
}
