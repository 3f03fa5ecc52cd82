import { describe, expect, it } from 'vitest'
import { formatCount, formatUsd } from './format'

describe('formatUsd', () => {
  it('never writes $0.000000 and keeps what matters of small costs', () => {
    expect(formatUsd(0)).toBe('$0.00')
    expect(formatUsd(0.000123456)).toBe('$0.000123')
    expect(formatUsd(0.0000004)).toBe('$0.0000004')
    expect(formatUsd(0.0123456)).toBe('$0.0123')
    expect(formatUsd(0.5)).toBe('$0.50')
    expect(formatUsd(1234.5678)).toBe('$1,234.57')
    expect(formatUsd(null)).toBe('—')
    expect(formatUsd(Number.NaN)).toBe('—')
  })
})

describe('formatCount', () => {
  it('has thousands separators', () => {
    expect(formatCount(0)).toBe('0')
    expect(formatCount(1234567)).toBe('1,234,567')
    expect(formatCount(12n)).toBe('12')
    expect(formatCount(undefined)).toBe('—')
  })
})
