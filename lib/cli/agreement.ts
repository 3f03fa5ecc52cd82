import { type Command, InvalidArgumentError } from 'commander'
import { z } from 'zod'
import type { CliTools } from '@/lib/cli/tools'
import type { AlphaLevel } from '@/lib/metrics/agreement'

/**
 * `parley agreement …`: agreement statistics of label files (no database), each printing one JSON
 * object (lib/metrics/agreement.ts does the arithmetic). A file that does not fit exits 1 naming
 * the first problem's field.
 */

const LEVELS = ['nominal', 'ordinal', 'interval', 'ratio'] as const

const label = z.number().finite().min(0).max(2)
const count = z.number().int().min(0)
const gradedLabels = z
  .strictObject({ gold: z.array(label).min(1), model: z.array(label).min(1) })
  .refine((v) => v.gold.length === v.model.length, {
    message: 'gold and model must have the same length',
    path: ['model'],
  })
const confusionCounts = z
  .strictObject({ model0_gold0: count, model0_gold1: count, model1_gold0: count, model1_gold1: count })
  .refine((c) => c.model0_gold0 + c.model0_gold1 + c.model1_gold0 + c.model1_gold1 > 0, {
    message: 'the four counts add up to 0',
  })

const id = z.union([z.string(), z.number().finite()])
const ranking = z
  .array(id)
  .min(1)
  .refine((r) => new Set(r).size === r.length, { message: 'an id appears twice' })
const rankFile = z.strictObject({
  ranking_a: ranking,
  ranking_b: ranking,
  phis: z.array(z.number().gt(0, 'φ must be greater than 0').lt(1, 'φ must be less than 1')).min(1).default([0.9, 0.7]),
})

const alphaFile = z.strictObject({
  units: z.array(z.array(z.number().finite().nullable())).min(1),
})

const fleissFile = z.strictObject({ counts: z.array(z.array(count).min(1)).min(1) }).superRefine((v, ctx) => {
  const k = v.counts[0]!.length
  const n = v.counts[0]!.reduce((s, x) => s + x, 0)
  if (n < 2) ctx.addIssue({ code: 'custom', path: ['counts', 0], message: 'each item needs at least 2 ratings' })
  v.counts.forEach((row, i) => {
    if (row.length !== k)
      ctx.addIssue({ code: 'custom', path: ['counts', i], message: `${row.length} categories, item 0 has ${k}` })
    else if (row.reduce((s, x) => s + x, 0) !== n)
      ctx.addIssue({
        code: 'custom',
        path: ['counts', i],
        message: `${row.reduce((s, x) => s + x, 0)} ratings, item 0 has ${n} (every item needs the same number of raters)`,
      })
  })
})

/** Registers `parley agreement labels|rank|alpha|fleiss` under `cmd`. */
export function agreementCommands(cmd: Command, t: Pick<CliTools, 'out' | 'readJsonFile' | 'CliError'>): void {
  /** The file's JSON, checked; the first problem in one line: `<file>: <field>: <message>`. */
  function check<T>(file: string, json: unknown, schema: z.ZodType<T>): T {
    const parsed = schema.safeParse(json)
    if (!parsed.success) {
      const i = parsed.error.issues[0]
      throw new t.CliError(`${file}: ${i?.path.join('.') || 'the file'}: ${i?.message}`)
    }
    return parsed.data
  }
  /** The file's JSON; a parse error (whose message quotes the text, newlines and all) on one line. */
  async function readJson(file: string): Promise<unknown> {
    try {
      return await t.readJsonFile(file)
    } catch (e) {
      if (e instanceof t.CliError) throw new t.CliError(e.message.replace(/\s*\n\s*/g, ' ').trim())
      throw e
    }
  }
  const print = (v: unknown) => t.out(JSON.stringify(v))

  cmd
    .command('labels')
    .description(
      "Two raters' labels (gold vs model): confusion matrix, accuracy, Cohen's κ and MAE on binarised labels",
    )
    .argument(
      '<file.json>',
      '{"gold": [0-2, …], "model": [0-2, …]} or {"model0_gold0", "model0_gold1", "model1_gold0", "model1_gold1"} ("-" reads standard input)',
    )
    .addHelpText(
      'after',
      `
Labels are numbers from 0 to 2 (a mean of several judges may be fractional); they are binarised
as label ≥ 1 → 1. Prints {"n", "confusion": {"model0_gold0", "model0_gold1", "model1_gold0",
"model1_gold1"}, "accuracy", "kappa", "maeBinary", "pAgreeModel0", "pAgreeModel1"} and, for label
lists, "maeGraded" (the MAE of the raw labels). kappa is null when undefined (p_e = 1).
Example: {"model0_gold0": 866, "model0_gold1": 405, "model1_gold0": 95, "model1_gold1": 1585}
gives kappa 0.644 (Thomas et al., Table 1).`,
    )
    .action(async (file: string) => {
      const { agreementOfConfusion, agreementOfLabels } = await import('@/lib/metrics/agreement')
      const json = await readJson(file)
      const isLists = !!json && typeof json === 'object' && ('gold' in json || 'model' in json)
      if (isLists) {
        const v = check(file, json, gradedLabels)
        const r = agreementOfLabels(v.gold, v.model)
        print({
          n: r.n,
          confusion: r.confusion,
          accuracy: r.accuracy,
          kappa: r.kappa,
          maeBinary: r.maeBinary,
          maeGraded: r.maeGraded,
          pAgreeModel0: r.pAgreeModel0,
          pAgreeModel1: r.pAgreeModel1,
        })
      } else {
        const r = agreementOfConfusion(check(file, json, confusionCounts))
        print({
          n: r.n,
          confusion: r.confusion,
          accuracy: r.accuracy,
          kappa: r.kappa,
          maeBinary: r.maeBinary,
          pAgreeModel0: r.pAgreeModel0,
          pAgreeModel1: r.pAgreeModel1,
        })
      }
    })

  cmd
    .command('rank')
    .description(
      "Two rankings of ids (best first): Kendall's τ and rank-biased overlap (truncated, min, max, normalised, extrapolated)",
    )
    .argument(
      '<file.json>',
      '{"ranking_a": [id, …], "ranking_b": [id, …], "phis"?: [0.9, 0.7]} ("-" reads standard input)',
    )
    .addHelpText(
      'after',
      `
Ids are strings or numbers, each once per ranking. RBO is taken at the depth of the shorter
ranking; "norm" = (trunc − min)/(max − min) is 0 for a reversed list and 1 for the same one, and
null unless both rankings hold the same ids (to that depth). "ext" is Webber et al.'s RBO_ext.
kendallTau is τ over the ids both rankings hold ("n" of them). Prints {"n", "kendallTau",
"rbo": {"0.9": {"trunc", "min", "max", "norm", "ext"}, …}}.`,
    )
    .action(async (file: string) => {
      const { kendallTauOfRankings, rbo } = await import('@/lib/metrics/agreement')
      const v = check(file, await readJson(file), rankFile)
      const tau = kendallTauOfRankings(v.ranking_a, v.ranking_b)
      const rbos: Record<string, { trunc: number; min: number; max: number; norm: number | null; ext: number }> = {}
      for (const phi of v.phis) {
        const r = rbo(v.ranking_a, v.ranking_b, phi)
        rbos[String(phi)] = { trunc: r.trunc, min: r.min, max: r.max, norm: r.norm, ext: r.ext }
      }
      print({ n: tau.n, kendallTau: tau.tau, rbo: rbos })
    })

  cmd
    .command('alpha')
    .description("Krippendorff's α of units × raters with missing values")
    .argument('<file.json>', '{"units": [[value or null per rater], …]} ("-" reads standard input)')
    .option(
      '--level <level>',
      `the metric: ${LEVELS.join(', ')}`,
      (v: string): AlphaLevel => {
        if (!(LEVELS as readonly string[]).includes(v))
          throw new InvalidArgumentError(`must be one of ${LEVELS.join(', ')}`)
        return v as AlphaLevel
      },
      'nominal',
    )
    .addHelpText(
      'after',
      `
Values are numbers; null (or a shorter row) is a missing value. Units with fewer than two values
are not pairable. Prints {"alpha", "level", "pairable"}; alpha is null when there is nothing to
disagree about (fewer than two pairable values, or one value only).`,
    )
    .action(async (file: string, opts: { level: AlphaLevel }) => {
      const { krippendorffAlpha } = await import('@/lib/metrics/agreement')
      const v = check(file, await readJson(file), alphaFile)
      print(krippendorffAlpha(v.units, opts.level))
    })

  cmd
    .command('fleiss')
    .description("Fleiss' κ of many raters from counts per item and category")
    .argument('<file.json>', '{"counts": [[raters per category], …]} ("-" reads standard input)')
    .addHelpText(
      'after',
      `
counts[i][j] is how many raters put item i in category j; every item has the same number (≥ 2)
of ratings. Prints {"fleissKappa", "pBar", "pExpected"}; fleissKappa is null when every rating
is in one category.`,
    )
    .action(async (file: string) => {
      const { fleissKappa } = await import('@/lib/metrics/agreement')
      const v = check(file, await readJson(file), fleissFile)
      print(fleissKappa(v.counts))
    })
}
