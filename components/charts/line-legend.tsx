/** A chart's legend drawn as HTML above the plot (so it never collides with the axis ticks): a line swatch per series. */
export function LineLegend({
  items,
  className,
  swatch = 16,
}: {
  items: ReadonlyArray<{ key: string; name: string; color: string; dash?: string }>
  /** Spacing and type size of the list (the flex layout and colour are the legend's own). */
  className: string
  swatch?: number
}) {
  return (
    <ul className={`flex flex-wrap text-stone-600 ${className}`} aria-label="Legend">
      {items.map((l) => (
        <li key={l.key} className="flex items-center gap-1">
          <svg width={swatch} height="6" aria-hidden="true">
            <line x1="0" y1="3" x2={swatch} y2="3" stroke={l.color} strokeWidth="2" strokeDasharray={l.dash} />
          </svg>
          {l.name}
        </li>
      ))}
    </ul>
  )
}
