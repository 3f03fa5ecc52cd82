import { entropy } from '@/protocols/evince/core/metrics'
import {
  distributionColumns,
  evinceConfig,
  finalDistribution,
  roundPoints,
  textList,
  top1Correct,
} from '@/protocols/evince/core'
import { describeRefused, type RefusedMessage } from '@/lib/protocols/types'
import { db, type ExportTable } from '@/lib/server/sdk'
import { analysisOf } from '@/protocols/evince/server/analysis'
import { replayed } from '@/protocols/evince/server/replayed'

// ---------------------------------------------------------------------------------------------
// Exports: rounds and finals, replayed 200 sessions at a time
// ---------------------------------------------------------------------------------------------

async function* debates(runId: string) {
  let cursor: string | undefined
  for (;;) {
    const page = await db.protocolSession.findMany({
      where: { runId: runId },
      orderBy: { id: 'asc' },
      take: 200,
      ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}),
      select: {
        id: true,
        position: true,
        status: true,
        stopReason: true,
        config: true,
        instance: true,
        messages: { orderBy: { seq: 'asc' }, select: { body: true } },
      },
    })
    if (!page.length) return
    cursor = page.at(-1)?.id
    for (const s of page) yield { s, ...replayed({ ...s, messages: s.messages.map((m) => m.body) }) }
  }
}

/** The run's k and the aliases its results use (config aliases and label merges). */
async function exportSettings(runId: string) {
  const e = await db.run.findUniqueOrThrow({ where: { id: runId }, select: { config: true, analysis: true } })
  const config = evinceConfig.parse(e.config)
  return { k: config.k, aliases: { ...config.aliases, ...analysisOf(e.analysis).merges } }
}

/** The finals' `excluded` cell: which stored message the rules refuse, or null. */
const exclusion = (refused: RefusedMessage | null) => (refused ? describeRefused(refused) : null)

/**
 * JSONL keeps the lists as lists; CSV writes a distribution as one column per item (`A_1_label`,
 * `A_1_probability` … up to k; P_f and EnToPPS up to 2k, the most two top-k lists can hold) and a
 * list of texts as one cell with " | " between the items, so no cell holds JSON.
 */
export const evinceExports: Record<string, ExportTable> = {
  rounds: {
    label: 'Rounds (every metric per round)',
    async *rows(runId, format) {
      const { k } = await exportSettings(runId)
      for await (const { s, state } of debates(runId)) {
        for (const p of roundPoints(state.rounds)) {
          const r = state.rounds.find((x) => x.round === p.round)
          const { round, delta, crit: _mean, critA, critB, ...metrics } = p
          const A = r?.A?.predictions.map(({ label, probability }) => ({ label, probability }))
          const B = r?.B?.predictions.map(({ label, probability }) => ({ label, probability }))
          const head = { session: s.id, position: s.position, round, delta }
          const tail = { ...metrics, critA, critB }
          yield format === 'csv'
            ? {
                ...head,
                ...distributionColumns('A', A, k),
                ...distributionColumns('B', B, k),
                labels: textList(r?.metrics?.labels),
                ...tail,
                warnings: textList(r?.metrics?.warnings),
              }
            : { ...head, A, B, labels: r?.metrics?.labels, ...tail, warnings: r?.metrics?.warnings }
        }
      }
    },
  },
  finals: {
    label: 'Finals (one row per case)',
    async *rows(runId, format) {
      const { k, aliases } = await exportSettings(runId)
      for await (const { s, instance, state, refused } of debates(runId)) {
        const final = finalDistribution(state)
        // A debate whose log the rules refuse has no final: it is excluded, and the row says why.
        const done = s.status === 'done' && !refused
        const crit = done ? (final?.crit ?? null) : null
        const entopps = done ? (final?.entopps ?? null) : null
        const head = {
          session: s.id,
          position: s.position,
          symptoms: instance.input.symptoms,
          truth: instance.prediction,
          status: s.status,
          stopReason: s.stopReason,
          rounds: state.rounds.filter((r) => r.metrics).length,
          top1: crit?.length ? [...crit].sort((x, y) => y.probability - x.probability)[0]?.label : null,
          top1Correct: done ? top1Correct(instance.prediction, crit, aliases) : null,
        }
        const entropyOfFinal = done && final ? entropy(final.crit.map((p) => p.probability)) : null
        yield format === 'csv'
          ? {
              ...head,
              ...distributionColumns('final', crit, 2 * k),
              finalEntropy: entropyOfFinal,
              ...distributionColumns('entopps', entopps, 2 * k),
              conclusion: state.report?.conclusion ?? null,
              missingInformation: textList(state.report?.missingInformation),
              labTests: textList(state.report?.labTests),
              excluded: exclusion(refused),
            }
          : {
              ...head,
              final: crit,
              finalEntropy: entropyOfFinal,
              entopps,
              conclusion: state.report?.conclusion ?? null,
              missingInformation: state.report?.missingInformation ?? null,
              labTests: state.report?.labTests ?? null,
              excluded: exclusion(refused),
            }
      }
    },
  },
}
