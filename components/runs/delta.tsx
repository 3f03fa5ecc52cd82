import { cn } from '@/components/ui/cn'

/**
 * B − A for a comparison table: signed, zero shown as "=" in grey, up in green and down in red
 * (whether up is better is the reader's call; the colour only shows the direction).
 */
export function Delta({
  a,
  b,
  digits = 0,
  unit = '',
}: {
  a: number | null
  b: number | null
  digits?: number
  unit?: string
}) {
  if (a === null || b === null) return <span className="text-stone-500">—</span>
  const d = b - a
  const rounded = Number(d.toFixed(digits))
  if (rounded === 0)
    return (
      <span className="text-stone-500" data-delta="0">
        =
      </span>
    )
  return (
    <span
      data-delta={rounded}
      className={cn('font-medium tabular-nums', rounded > 0 ? 'text-green-800' : 'text-red-700')}
    >
      {rounded > 0 ? '+' : '−'}
      {Math.abs(rounded).toFixed(digits)}
      {unit}
    </span>
  )
}
