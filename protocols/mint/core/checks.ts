/**
 * MINT's success checks (mint-and-llm-labelling.md §A.2.3), reproducing the authors' Task classes
 * (mint/tasks/reasoning.py, codegen.py, commit 3f7f12c) including their quirks, so a verdict here is the
 * verdict the released runs got:
 * - GSM8K / MATH / HotpotQA (ReasoningTask): both lower-cased and stripped; when both parse as Python
 *   floats, |ref − ans| ≤ 0.05·|ref|; otherwise the reference must be a substring of the answer.
 * - MMLU (MultipleChoiceTask): the authors' extract_answer returns "a" when the answer holds "a)" or "a )"
 *   and the answer itself otherwise (its loop returns on the first letter); then the reference letter as a
 *   substring, else option texts: any other option's text in the answer fails, the correct one's passes.
 * - TheoremQA: the official normalisation (=, ≈, `, $, °, booleans, "approximately", " or ", units,
 *   10^n, " x ", thousands commas, options (a)–(d)) and then, instead of Python's `eval`, a SAFE parser of
 *   the Python literal subset: numbers (ints, floats, exponents, underscores), True/False, quoted strings,
 *   lists, tuples and sets (as lists), parentheses and + − * / // % ** on numbers. Anything else (names
 *   such as pi or math.pow, calls, comparisons) fails to convert, as it mostly does for the authors: the
 *   module evaluates in reasoning.py's namespace, which has no `math` and no `pi` (np.pi would work there
 *   and does not here). Floats pass within 4 % of |gt|, integers by round(pred) == gt, lists sorted and
 *   compared element-wise, bool and option by equality (Python's, where 0 == False).
 * - HumanEval / MBPP: a descriptor of the program the sandbox runs: the proposed code, a newline, and the
 *   reference test code (HumanEval's ends with check(<entry_point>); MBPP's is its test_list asserts),
 *   exactly the authors' check_correctness(solution + "\n" + test, timeout = 10).
 */
import { type MintInstance, pyStrip } from './protocol'

/** What the sandbox runs for a code task; success iff it exits normally within the timeout. */
export interface TestsDescriptor {
  kind: 'tests'
  program: string
  timeoutSeconds: 10
}

export type CheckResult = { kind: 'verdict'; correct: boolean } | TestsDescriptor

/** Python's float(s) for a string (whitespace, sign, digits with underscores, exponent, inf, nan), or null. */
export function pyFloat(s: string): number | null {
  const t = pyStrip(s)
  const digits = '\\d(?:_?\\d)*'
  const re = new RegExp(
    `^[+-]?(?:(?:${digits}(?:\\.(?:${digits})?)?|\\.${digits})(?:[eE][+-]?${digits})?|inf(?:inity)?|nan)$`,
    'i',
  )
  if (!re.test(t)) return null
  const clean = t.replaceAll('_', '').toLowerCase()
  if (clean.includes('nan')) return Number.NaN
  if (clean.includes('inf')) return clean.startsWith('-') ? -Infinity : Infinity
  return Number(clean)
}

export interface CheckOptions {
  /**
   * The tolerance rule the released outputs were judged with: before the authors' commit 3f7f12c (June
   * 2024, "fix reasoning task eval check") the 5 % band was 0.05·ref without abs(), so a negative
   * reference never matched. Default false: the fixed rule.
   */
  legacyTolerance?: boolean
}

/** ReasoningTask.compare_w_digits. */
function compareWithDigits(reference: string, answer: string, opts: CheckOptions): boolean {
  const r = pyFloat(reference)
  const a = pyFloat(answer)
  if (r !== null && a !== null) return Math.abs(r - a) <= 0.05 * (opts.legacyTolerance ? r : Math.abs(r))
  return answer.includes(reference)
}

/** GSM8K, MATH, HotpotQA. */
export function checkReasoning(answer: string, reference: string, opts: CheckOptions = {}): boolean {
  return compareWithDigits(pyStrip(reference).toLowerCase(), pyStrip(answer.toLowerCase()), opts)
}

/** Python's str.strip(chars). */
function stripChars(s: string, chars: string): string {
  let a = 0
  let b = s.length
  while (a < b && chars.includes(s[a] as string)) a++
  while (b > a && chars.includes(s[b - 1] as string)) b--
  return s.slice(a, b)
}

/** MultipleChoiceTask.extract_options: letter → option text (lower-cased), or null where the authors' code raises. */
export function mmluOptions(prompt: string): Map<string, string> | null {
  const tail = prompt.split('Options: ').pop() as string
  const options = new Map<string, string>()
  for (const raw of tail.split(' , ')) {
    const parts = stripChars(raw, "[]' ").split(')')
    if (parts.length < 2) return null
    const letter = pyStrip((parts[0] as string).toLowerCase())
    const content = pyStrip(
      stripChars((parts[1] as string).toLowerCase(), '.')
        .replaceAll('. Which option is correct?', '')
        .replaceAll('. Which one is correct?', ''),
    )
    options.set(letter, content)
  }
  return options
}

const isDigits = (s: string) => /^\d+$/.test(s)
/** MultipleChoiceTask.compare_w_digits. */
function mcCompare(reference: string, answer: string): boolean {
  if (isDigits(reference) && isDigits(answer))
    return Math.abs(Number(reference) - Number(answer)) <= 0.05 * Number(reference)
  return answer.includes(reference)
}

/** MMLU: the authors' MultipleChoiceTask.success on the raw task prompt and reference letter. */
export function checkMultipleChoice(solution: string, prompt: string, reference: string): boolean {
  const ref = pyStrip(reference).toLowerCase()
  const options = mmluOptions(prompt)
  const s = pyStrip(solution.toLowerCase())
  const answer = s.includes('a)') || s.includes('a )') ? 'a' : s
  if (mcCompare(ref, answer)) return true
  const correct = options?.get(ref)
  if (options === null || correct === undefined) return false // the authors' code raises: not a success
  const wrong = [...options.values()]
  // Python's `for i in wrong: if i in correct: wrong.remove(i)` mutates the list it walks (skipping the
  // element after each removal); reproduced as is.
  for (let i = 0; i < wrong.length; i++) {
    const x = wrong[i] as string
    if (correct.includes(x)) wrong.splice(wrong.indexOf(x), 1)
  }
  for (const x of wrong) if (mcCompare(x, answer) || answer.includes(x)) return false
  return mcCompare(correct, answer) || answer.includes(correct)
}

// ---- TheoremQA ----

export type PyValue =
  | { t: 'int'; v: number }
  | { t: 'float'; v: number }
  | { t: 'bool'; v: boolean }
  | { t: 'str'; v: string }
  | { t: 'list'; v: PyValue[] }

/** The official TheoremQA normalisation of a prediction (the authors' extract_answer up to `eval`). */
export function normaliseTheoremqa(solution: string): string {
  let p = solution
  if (p.includes('=')) p = pyStrip(p.split('=').pop() as string)
  if (p.includes('≈')) p = pyStrip(p.split('≈').pop() as string)
  p = p.replaceAll('`', '').replaceAll('$', '').replaceAll('°', '')
  if (['true', 'yes', 'false', 'no'].includes(p)) p = p === 'true' || p === 'yes' ? 'True' : 'False'
  if (p.includes('True') || p.includes('False')) p = p.includes('True') ? 'True' : 'False'
  if (p.includes('approximately')) p = pyStrip(p.replaceAll('approximately', ''))
  if (p.includes(' or ')) p = p.split(' or ')[0] as string
  let m: RegExpExecArray | null
  if (/^[-+]?(?:[\d,]*\.*\d+) [^0-9 ]+$/.test(p)) {
    m = /([-+]?(?:[\d,]*\.*\d+)) [^0-9 ]+$/.exec(p)
    if (m) p = m[1] as string
  }
  if (/^[^0-9 ]+ [-+]?(?:[\d,]*\.*\d+)$/.test(p)) {
    m = /[^0-9 ]+ ([-+]?(?:[\d,]*\.*\d+))$/.exec(p)
    if (m) p = m[1] as string
  }
  if (/^[-+]?(?:[\d,]*\.*\d+)[^\d]{1,2}$/.test(p)) {
    m = /([-+]?(?:[\d,]*\.*\d+))[^\d]{1,2}$/.exec(p)
    if (m) p = m[1] as string
  }
  if (/^[^-+\d]{1,2}(?:[\d,]*\.*\d+)$/.test(p)) {
    m = /[^-+\d]{1,2}((?:[\d,]*\.*\d+))$/.exec(p)
    if (m) p = m[1] as string
  }
  if (p.includes('10^')) p = p.replace(/10\^(-?\d+)/g, 'math.pow(10, $1)')
  p = p.replaceAll(' x ', '*').replaceAll(' × ', '*')
  if (/^[-+]?(\d{1,3}(,\d{3})*|(\d+))(\.\d+)?$/.test(p)) p = p.replaceAll(',', '')
  for (const l of ['a', 'b', 'c', 'd'])
    if (p.includes(`${l})`) || p.includes(`${l} )`) || pyStrip(p.toLowerCase()) === l) p = `(${l})`
  const opt = /\([a-d]\)/.exec(p)
  if (opt) p = `"${opt[0]}"`
  if (!p) p = '0'
  return p
}

class ParseFail extends Error {}

/** A safe evaluator of the Python literal/arithmetic subset described above; null when Python would not give a value we support. */
export function safePythonValue(src: string): PyValue | null {
  let i = 0
  const s = src
  const ws = () => {
    while (i < s.length && /[ \t\n\r\f\v]/.test(s[i] as string)) i++
  }
  const peek = (tok: string) => {
    ws()
    return s.startsWith(tok, i)
  }
  const eat = (tok: string) => {
    if (!peek(tok)) throw new ParseFail(tok)
    i += tok.length
  }
  const num = (x: PyValue): number => {
    if (x.t === 'int' || x.t === 'float') return x.v
    if (x.t === 'bool') return x.v ? 1 : 0
    throw new ParseFail('not a number')
  }
  const isNum = (x: PyValue) => x.t === 'int' || x.t === 'float' || x.t === 'bool'
  const mk = (v: number, float: boolean): PyValue => {
    if (!Number.isFinite(v) && !float) throw new ParseFail('overflow')
    return float ? { t: 'float', v } : { t: 'int', v }
  }
  const binary = (op: string, a: PyValue, b: PyValue): PyValue => {
    if (op === '+' && a.t === 'str' && b.t === 'str') return { t: 'str', v: a.v + b.v }
    if (op === '+' && a.t === 'list' && b.t === 'list') return { t: 'list', v: [...a.v, ...b.v] }
    if (!isNum(a) || !isNum(b)) throw new ParseFail('operands')
    const x = num(a)
    const y = num(b)
    const fl = a.t === 'float' || b.t === 'float'
    switch (op) {
      case '+':
        return mk(x + y, fl)
      case '-':
        return mk(x - y, fl)
      case '*':
        return mk(x * y, fl)
      case '/':
        if (y === 0) throw new ParseFail('division by zero')
        return mk(x / y, true)
      case '//':
        if (y === 0) throw new ParseFail('division by zero')
        return mk(Math.floor(x / y), fl)
      case '%':
        if (y === 0) throw new ParseFail('division by zero')
        return mk(x - y * Math.floor(x / y), fl)
      default: {
        if (x === 0 && y < 0) throw new ParseFail('zero to a negative power')
        if (x < 0 && !Number.isInteger(y)) throw new ParseFail('complex result') // Python gives a complex number
        return mk(x ** y, fl || y < 0)
      }
    }
  }
  const atom = (): PyValue => {
    ws()
    const c = s[i]
    if (c === '(' || c === '[' || c === '{') {
      const close = c === '(' ? ')' : c === '[' ? ']' : '}'
      i++
      const items: PyValue[] = []
      let comma = false
      while (!peek(close)) {
        items.push(expr())
        if (peek(',')) {
          eat(',')
          comma = true
        } else break
      }
      eat(close)
      if (c === '(' && !comma) {
        if (items.length !== 1) throw new ParseFail('()') // an empty tuple: not a value we compare
        return items[0] as PyValue
      }
      if (c === '{' && items.length === 0) throw new ParseFail('dict')
      return { t: 'list', v: items }
    }
    if (c === '"' || c === "'") {
      const end = s.indexOf(c, i + 1)
      if (end < 0) throw new ParseFail('string')
      const v = s.slice(i + 1, end)
      if (v.includes('\\') || v.includes('\n')) throw new ParseFail('escapes')
      i = end + 1
      return { t: 'str', v }
    }
    const word = /^[A-Za-z_]\w*/.exec(s.slice(i))?.[0]
    if (word) {
      i += word.length
      if (word === 'True') return { t: 'bool', v: true }
      if (word === 'False') return { t: 'bool', v: false }
      throw new ParseFail(`name ${word}`)
    }
    const m = /^(?:(\d(?:_?\d)*)?(\.)?(\d(?:_?\d)*)?)([eE][+-]?\d(?:_?\d)*)?/.exec(s.slice(i))
    const lit = m?.[0] ?? ''
    if (!lit || lit === '.' || !/\d/.test(lit.replace(/[eE].*$/, ''))) throw new ParseFail('number')
    if (/^[A-Za-z_\d]/.test(s.slice(i + lit.length))) throw new ParseFail('number suffix') // 1j, 2pi, 0x…
    const isFloat = lit.includes('.') || /[eE]/.test(lit)
    if (!isFloat && /^0\d/.test(lit.replaceAll('_', '')) && /[1-9]/.test(lit)) throw new ParseFail('leading zero')
    i += lit.length
    return mk(Number(lit.replaceAll('_', '')), isFloat)
  }
  const power = (): PyValue => {
    const base = atom()
    if (peek('**')) {
      eat('**')
      return binary('**', base, unary())
    }
    return base
  }
  const unary = (): PyValue => {
    ws()
    if (s[i] === '-' || s[i] === '+') {
      const op = s[i]
      i++
      const v = unary()
      if (!isNum(v)) throw new ParseFail('unary')
      const n = num(v)
      return mk(op === '-' ? -n : n, v.t === 'float')
    }
    return power()
  }
  const term = (): PyValue => {
    let v = unary()
    for (;;) {
      if (peek('**')) throw new ParseFail('**')
      const op = peek('//') ? '//' : peek('*') ? '*' : peek('/') ? '/' : peek('%') ? '%' : null
      if (!op) return v
      eat(op)
      v = binary(op, v, unary())
    }
  }
  const expr = (): PyValue => {
    let v = term()
    for (;;) {
      const op = peek('+') ? '+' : peek('-') ? '-' : null
      if (!op) return v
      eat(op)
      v = binary(op, v, term())
    }
  }
  try {
    const first = expr()
    let out: PyValue = first
    if (peek(',')) {
      const items = [first]
      while (peek(',')) {
        eat(',')
        ws()
        if (i >= s.length) break
        items.push(expr())
      }
      out = { t: 'list', v: items }
    }
    ws()
    if (i !== s.length) return null
    return out
  } catch (e) {
    if (e instanceof ParseFail) return null
    throw e
  }
}

/** A released TheoremQA reference (JSON text: 1.12, 5, [0, 5], false, "(a)" or a bare string). */
function referenceValue(text: string): PyValue {
  const t = text.trim()
  if (t === 'true' || t === 'false') return { t: 'bool', v: t === 'true' }
  if (/^[-+]?\d+$/.test(t)) return { t: 'int', v: Number(t) }
  if (/^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$/.test(t)) return { t: 'float', v: Number(t) }
  if (t.startsWith('[')) {
    const inner = t.slice(1, -1).trim()
    return { t: 'list', v: inner === '' ? [] : inner.split(',').map((x) => referenceValue(x)) }
  }
  try {
    const v: unknown = JSON.parse(t)
    if (typeof v === 'string') return { t: 'str', v }
  } catch {
    /* a bare string */
  }
  return { t: 'str', v: t }
}

const numeric = (x: PyValue): number | null =>
  x.t === 'int' || x.t === 'float' ? x.v : x.t === 'bool' ? (x.v ? 1 : 0) : null

/** Python's round (half to even) as the authors' round(pred). */
function pyRound(x: number): number {
  const r = Math.round(x)
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r
}

function compareTwoNumbers(p: PyValue, gt: PyValue): boolean {
  // Python: an int, float or bool (a bool is an int) goes on; a str or a list is False
  const x = numeric(p)
  const g = numeric(gt)
  if (x === null || g === null) return false
  if (gt.t === 'float') {
    const eps = Math.abs(g) * 0.04
    return x >= g - eps && x <= g + eps
  }
  return pyRound(x) === g
}

function pyEquals(a: PyValue, b: PyValue): boolean {
  const x = numeric(a)
  const y = numeric(b)
  if (x !== null && y !== null) return x === y
  if (a.t === 'str' && b.t === 'str') return a.v === b.v
  if (a.t === 'list' && b.t === 'list')
    return a.v.length === b.v.length && a.v.every((v, k) => pyEquals(v, b.v[k] as PyValue))
  return false
}

/** TheoremQA: the normalised, safely parsed prediction against the reference by answer type. */
export function checkTheoremqa(solution: string, reference: string, answerType: string | undefined): boolean {
  const pred = safePythonValue(normaliseTheoremqa(solution))
  if (pred === null) return false
  const gt = referenceValue(reference)
  switch (answerType) {
    case 'bool':
    case 'option':
    case 'Option': {
      const gtText = gt.t === 'bool' ? (gt.v ? 'True' : 'False') : gt.t === 'str' ? gt.v : String(numeric(gt))
      return (pred.t === 'str' && pred.v === `(${gtText})`) || pyEquals(pred, gt)
    }
    case 'integer':
    case 'float':
      return compareTwoNumbers(pred, gt)
    case 'list of integer':
    case 'list of float': {
      if (pred.t !== 'list' || gt.t !== 'list' || pred.v.length !== gt.v.length) return false
      if (pred.v.some((x) => numeric(x) === null)) return false
      const ps = [...pred.v].sort((a, b) => (numeric(a) as number) - (numeric(b) as number))
      const gs = [...gt.v].sort((a, b) => (numeric(a) as number) - (numeric(b) as number))
      return ps.every((p, k) => compareTwoNumbers(p, gs[k] as PyValue))
    }
    default:
      return false // the authors' code raises for other answer types: never a success
  }
}

/** The proposal's check: a verdict for the reasoning sets, the sandbox program for code, null for ALFWorld. */
export function checkProposal(instance: MintInstance, answer: string, opts: CheckOptions = {}): CheckResult | null {
  switch (instance.dataset) {
    case 'gsm8k':
    case 'hotpotqa':
    case 'math':
      return { kind: 'verdict', correct: checkReasoning(answer, instance.reference, opts) }
    case 'mmlu':
      return { kind: 'verdict', correct: checkMultipleChoice(answer, instance.prompt, instance.reference) }
    case 'theoremqa':
      return { kind: 'verdict', correct: checkTheoremqa(answer, instance.reference, instance.answerType) }
    case 'humaneval':
    case 'mbpp':
      return { kind: 'tests', program: `${answer}\n${instance.reference}`, timeoutSeconds: 10 }
    case 'alfworld':
      return null // success is reported by the ALFWorld environment after an action
  }
}
