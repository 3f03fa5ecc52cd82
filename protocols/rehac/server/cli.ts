import { InvalidArgumentError } from 'commander'
import { z } from 'zod'
import type { CliTools, ProtocolCli } from '@/lib/server/sdk'

/** λ, the cost of one human step: a finite number ≥ 0 ("0.08", "1e-2"). */
const lambdaOption = z.string().trim().min(1).transform(Number).pipe(z.number().min(0))
/** The longest state kept, in code points: a positive whole number. */
const maxStateCharsOption = z
  .string()
  .trim()
  .regex(/^\d+$/)
  .transform(Number)
  .pipe(z.number().int().positive().max(Number.MAX_SAFE_INTEGER))
/** A whole number from `min` to `max` (epochs, seed). */
const wholeOption = (min: number, max: number) =>
  z.string().trim().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(min).max(max))
/** The held-out fraction of the questions: 0 to 0.9. */
const fractionOption = z.string().trim().min(1).transform(Number).pipe(z.number().min(0).max(0.9))

/** Commander's parser of an option checked by a zod schema (a bad value is a usage error, exit 2). */
const checked =
  <T>(schema: z.ZodType<T, string>, must: string) =>
  (v: string): T => {
    const r = schema.safeParse(v)
    if (!r.success) throw new InvalidArgumentError(must)
    return r.data
  }

const FORMAT = `
The file is the authors' JSONL (github.com/XueyangFeng/ReHAC), one trajectory per line:
  {"idx"?: 0, "trajectory": "Question: …\\n<solver> agent\\nThought 1: …\\nAction 1: …\\nObservation 1: …\\n…",
   "em": true|false|0..1, "f1": 0..1}
every step starts with a "<solver> agent" or "<solver> human" line; "f1" is the task reward T
(InterCode's files hold the SQL reward there). Blank lines are skipped; other keys are ignored.
A line that is not such an object exits 1 naming the line. "-" reads standard input.`

/** `parley rehac …`: ReHAC's offline-RL rows and evaluation figures from trajectory files (no database). */
export const cli: ProtocolCli = {
  description: 'ReHAC human-agent collaboration: advantages and evaluation from trajectory files (no database)',
  commands(cmd, t: CliTools) {
    /** The file's rows, streamed and checked line by line by the protocol's one JSONL reader. */
    async function* trajectories(file: string) {
      const { JsonlReader } = await import('@/lib/tasks/jsonl')
      const { REHAC_JSONL, rehacLine } = await import('@/protocols/rehac/core/trajectory')
      const reader = new JsonlReader(rehacLine, {
        ...REHAC_JSONL,
        fail: (message) => new t.CliError(`${file}: ${message}`),
        check: (row) =>
          row.trajectory.includes('<solver>')
            ? null
            : 'trajectory: no "<solver> agent|human" line (a trajectory has at least one step)',
      })
      for await (const line of t.readLines(file)) {
        const row = reader.push(line)
        if (row !== null) yield row
      }
      if (reader.rows === 0) throw new t.CliError(`No trajectories in ${file}.`)
    }

    cmd
      .command('advantages')
      .description(
        "The offline-RL training rows of a trajectory file, exactly as the authors' Monte-Carlo pipeline computes them",
      )
      .argument(
        '<trajectories.jsonl>',
        'one trajectory per line: {"trajectory", "em", "f1"} ("-" reads standard input)',
      )
      .option('--lambda <λ>', 'cost of one human step', checked(lambdaOption, 'must be a finite number ≥ 0'), 0.08)
      .option(
        '--max-state-chars <n>',
        'drop states longer than this (code points)',
        checked(maxStateCharsOption, 'must be a positive whole number'),
        5041,
      )
      .addHelpText(
        'after',
        `${FORMAT}

Every "<solver>" line is a decision: its state is the trajectory text up to and including that
"<solver>" (leading whitespace stripped), its action 0 when the word after it is "agent", else 1,
and its return the episode's R = f1 − λ·C, C the trajectory's human steps. Decisions are grouped
by exact state and action into the mean return R̄(s,a) and count n; states longer than
--max-state-chars are dropped, and so are states seen with one action only. Prints one JSON object
per line, two per state (first-seen action first, states in order of first appearance):
  {"state", "action": 0|1, "reward": A(s,a) = (R̄(s,a) − R̄(s,¬a)) / 2, "count": n, "meanReturn": R̄(s,a)}`,
      )
      .action(async (file: string, opts: { lambda: number; maxStateChars: number }) => {
        const { advantageTables } = await import('@/protocols/rehac/core/advantages')
        const episodes: { trajectory: string; f1: number }[] = []
        for await (const row of trajectories(file)) episodes.push({ trajectory: row.trajectory, f1: row.f1 })
        const tables = advantageTables(episodes, { lambda: opts.lambda, maxStateLength: opts.maxStateChars })
        for (const r of tables.advantages)
          t.out(
            JSON.stringify({
              state: r.state,
              action: r.action,
              reward: r.reward,
              count: r.count,
              meanReturn: r.meanReturn,
            }),
          )
      })

    cmd
      .command('train')
      .description(
        'Train a collaboration policy on a trajectory file (offline-RL rows at λ, whole questions held out by seed); prints the model and its offline estimate',
      )
      .argument(
        '<trajectories.jsonl>',
        'one trajectory per line: {"trajectory", "em", "f1"} ("-" reads standard input)',
      )
      .option(
        '--lambda <λ>',
        'cost of one human step',
        checked(lambdaOption.pipe(z.number().max(1)), 'must be a number from 0 to 1'),
        0.08,
      )
      .option(
        '--epochs <n>',
        'training epochs',
        checked(wholeOption(1, 200), 'must be a whole number from 1 to 200'),
        10,
      )
      .option(
        '--seed <n>',
        'seed of the split, the initial weights and the shuffles',
        checked(wholeOption(0, 2_147_483_647), 'must be a whole number ≥ 0'),
        42,
      )
      .option(
        '--held-out <fraction>',
        'share of the questions held out for the offline estimate',
        checked(fractionOption, 'must be a number from 0 to 0.9'),
        0.2,
      )
      .addHelpText(
        'after',
        `${FORMAT}

The rows are those of \`parley rehac advantages\` at --lambda; a row's question is its state's text
before the first "<solver>". The questions are shuffled with --seed and round(fraction · n) held
out (at least one, and one kept, when there are two or more). Prints two lines:
  1. the model JSON ({"kind": "rehac-logistic", …}): paste it as a trained-policy decider's model;
  2. {"lambda", "epochs", "seed", "heldOutFraction", "trajectories", "rows", "trainRows",
     "heldOutRows", "trainQuestions", "heldOutQuestions", "finalLoss", "train", "heldOut"}, where
     "heldOut" has "policy", "agentOnly" and "humanOnly", each {"meanChosenAdvantage" (the count-
     weighted mean advantage of the action picked in each held-out state with both actions),
     "stateAccuracy" (share of those states where it picks the better action), "humanRate",
     "states"}; "heldOut" is null when nothing is held out.
Exits 1 when no state was reached with both actions.`,
      )
      .action(async (file: string, opts: { lambda: number; epochs: number; seed: number; heldOut: number }) => {
        const { TrainDataError, trainOnTrajectories, trainSummary } = await import('@/protocols/rehac/core/train')
        const episodes: { trajectory: string; f1: number }[] = []
        for await (const row of trajectories(file)) episodes.push({ trajectory: row.trajectory, f1: row.f1 })
        try {
          const report = trainOnTrajectories(episodes, {
            lambda: opts.lambda,
            epochs: opts.epochs,
            seed: opts.seed,
            heldOutFraction: opts.heldOut,
          })
          t.out(JSON.stringify(report.model))
          t.out(JSON.stringify(trainSummary(report)))
        } catch (err) {
          if (err instanceof TrainDataError) throw new t.CliError(`${file}: ${err.message}`)
          throw err
        }
      })

    cmd
      .command('eval')
      .description("A trajectory file's evaluation figures at λ (the paper's Table 4 columns, as fractions)")
      .argument(
        '<trajectories.jsonl>',
        'one trajectory per line: {"trajectory", "em", "f1"} ("-" reads standard input)',
      )
      .option('--lambda <λ>', 'cost of one human step', checked(lambdaOption, 'must be a finite number ≥ 0'), 0.08)
      .addHelpText(
        'after',
        `${FORMAT}

Prints one JSON object (fractions; the paper prints them ×100):
  {"trajectories", "T": mean f1, "em": mean em (true 1, false 0), "humanSteps", "steps" (totals of
   "<solver> human" and "<solver>" lines), "cost": λ · mean human steps, "R": mean of f1 − λ·C,
   "hir": humanSteps / steps (pooled over the file)}`,
      )
      .action(async (file: string, opts: { lambda: number }) => {
        const { RehacEvaluator } = await import('@/protocols/rehac/core/metrics')
        const e = new RehacEvaluator(opts.lambda)
        for await (const row of trajectories(file)) e.add(row)
        t.out(JSON.stringify(e.result()))
      })
  },
}
