import type { CliTools, ProtocolCli } from '@/lib/server/sdk'

/** `parley pxp …`: statistics from files (no database), and running and exporting experiments. */
export const cli: ProtocolCli = {
  description: 'PXP (INTERACT): statistics from files (no database), and running and exporting experiments',
  commands(pxpCmd, t: CliTools) {
    pxpCmd
      .command('stats')
      .description(
        'Intelligibility counts (one-way, two-way, strong, ultra-strong, by bound) from PXP messages: median, min and max over repetitions',
      )
      .argument(
        '<messages.jsonl>',
        'one JSON object per line: {"repetition": 1, "session": "s1", "j": 1, "sender": "m", "tag": "INIT"} ("-" reads standard input)',
      )
      .option('--pretty', 'indent the JSON')
      .addHelpText(
        'after',
        `
Lines may come in any order; tags and senders in any case; other fields are ignored; repetition
defaults to 1. Each session must hold messages 1..L once each, the machine ("m") at odd j and the
human ("h") at even j, INIT at j = 1 only. A line that breaks this exits 1 naming the line.
Prints {"repetitions", "sessions", "oneWay", "twoWay", "strong", "ultraStrong", "byBound"}; each
count is {"median", "min", "max"} over the repetitions, "sessions" the median per repetition.`,
      )
      .action(async (file: string, opts: { pretty?: boolean }) => {
        const { pxpStats } = await import('@/protocols/pxp/core/stats')
        const report = await pxpStats(t.readLines(file))
        t.out(JSON.stringify(report, null, opts.pretty ? 2 : undefined))
      })
    pxpCmd
      .command('import-tags')
      .description("Convert the authors' tags.txt (karannb/interact) into the JSONL messages `parley pxp stats` reads")
      .argument('<tags.txt>', 'one session per line ("-" reads standard input)')
      .option('--repetition <n>', 'the repetition number of these sessions', t.wholeNumber, 1)
      .action(async (file: string, opts: { repetition: number }) => {
        const { TagsFileReader, sessionToJsonl } = await import('@/protocols/pxp/core/tags-file')
        const reader = new TagsFileReader()
        const lines: string[] = []
        // Everything is checked before anything is printed, so a bad file never feeds half a run to a pipe.
        for await (const l of t.readLines(file)) {
          const session = reader.push(l)
          if (session) lines.push(...sessionToJsonl(session, opts.repetition))
        }
        if (lines.length === 0) throw new t.CliError(`No sessions in ${file}.`)
        t.out(lines.join('\n'))
      })
    pxpCmd
      .command('run')
      .description('The same as `parley run <id>` (kept for scripts written before runs were generic)')
      .requiredOption('--experiment <id>', 'the experiment id')
      .option('--concurrency <n>', 'sessions (or carried-over chains) at once', t.wholeNumber, 4)
      .action((opts: { experiment: string; concurrency: number }) => t.runHeadless(opts.experiment, opts.concurrency))
    pxpCmd
      .command('export')
      .description("An experiment's messages (M) as JSON Lines, the format `parley pxp stats` reads")
      .requiredOption('--experiment <id>', 'the experiment id')
      .action((opts: { experiment: string }) => t.exportTable(opts.experiment, 'm'))
  },
}
