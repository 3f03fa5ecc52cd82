import type { CliTools, ProtocolCli } from '@/lib/server/sdk'

/** `parley evince …`: metrics of debate files (no database). */
export const cli: ProtocolCli = {
  description: 'EVINCE debates: metrics from files (no database)',
  commands(cmd, t: CliTools) {
    cmd
      .command('metrics')
      .description('Every metric per round of a debate file, exactly as the debate pages compute them (bits)')
      .argument(
        '<debate.json>',
        '{"rounds": [{"A": [{"label": …, "probability": …}, …], "B": […]}, …], "epsilon"?: 0.001, "aliases"?: {…}} ("-" reads standard input)',
      )
      .option('--pretty', 'indent the JSON')
      .addHelpText(
        'after',
        `
Labels are aligned on the union of both lists (parentheticals stripped, case-folded, aliases
applied) and each list is renormalised; KL and cross-entropy are ε-smoothed; wd is the 0/1-metric
Wasserstein distance (total variation) in [0, 1]; mi uses the maximal-agreement coupling.
Prints {"rounds": [{"round", "labels", "entropyA", "entropyB", "klAB", "klBA", "crossEntropyAB",
"crossEntropyBA", "jsd", "wd", "mi", "nmi", "warnings"}]}. Other keys in the file are ignored.`,
      )
      .action(async (file: string, opts: { pretty?: boolean }) => {
        const { debateFileSchema, debateMetrics, MetricsInputError } = await import('@/protocols/evince/core/metrics')
        const json = await t.readJsonFile(file)
        const parsed = debateFileSchema.safeParse(json)
        if (!parsed.success) {
          const i = parsed.error.issues[0]
          throw new t.CliError(`${file}: ${i?.path.join('.') || 'the file'}: ${i?.message}`)
        }
        try {
          t.out(JSON.stringify(debateMetrics(parsed.data), null, opts.pretty ? 2 : undefined))
        } catch (e) {
          if (e instanceof MetricsInputError) throw new t.CliError(`${file}: ${e.message}`)
          throw e
        }
      })
  },
}
