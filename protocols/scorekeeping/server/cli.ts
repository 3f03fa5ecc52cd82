import type { CliTools, ProtocolCli } from '@/lib/server/sdk'

/** `parley scorekeeping …`: replays of clembench cases from files (no database). */
export const cli: ProtocolCli = {
  description: 'The clembench scorekeeping game (privateshared): replays from files (no database)',
  commands(cmd, t: CliTools) {
    cmd
      .command('replay')
      .description("Replay a scripted answerer through the scorekeeping protocol and print clembench's scores.json")
      .argument(
        '<case.json>',
        '{"experiment", "game_id", "instance": {…clembench instance…}, "slot_answers": […], "probe_answers": [[[…]]]} ("-" reads standard input)',
      )
      .option('--pretty', 'indent the JSON')
      .addHelpText(
        'after',
        `
slot_answers[r-1] is the raw reply to the request of round r; probe_answers[r][i] lists the raw
replies, try by try, to the probe of the i-th slot (the instance's slot order) in probing round r
(0 is the round before the first request). Replies are parsed as clembench does ("ANSWER: …",
"ASIDE: yes/no"); an invalid slot answer, or a probe still invalid after 5 tries, aborts the game,
and replies after that are ignored. Prints {"turn scores": {"0": {…}, …}, "episode scores": {…}}
with clembench's key names; NaN (an aborted game) is written as null.`,
      )
      .action(async (file: string, opts: { pretty?: boolean }) => {
        const { replayCase, ClembenchError } = await import('@/protocols/scorekeeping/core/clembench')
        const json = await t.readJsonFile(file)
        try {
          t.out(JSON.stringify(replayCase(json).scores, null, opts.pretty ? 2 : undefined))
        } catch (e) {
          if (e instanceof ClembenchError) throw new t.CliError(`${file}: ${e.message}`)
          throw e
        }
      })
  },
}
