import { z } from 'zod'
import { ProtocolError } from '@/lib/protocols/types'
import { type Actor, badRequest, definePlugin, type HumanContext, type Produced } from '@/lib/server/sdk'
import {
  itemTitle,
  type LabelMessage,
  type LabellingMessage,
  labelling,
  MAX_RATIONALE,
  type OptionValue,
  questionOf,
} from '@/protocols/labelling/core'
import { labellingDemo, llmLabeller } from '@/protocols/labelling/server/llm-labeller'

/**
 * Labelling (issue 25) on the engine: one session per (item, slot), one annotator seat that labels the
 * item once. The seat is a person (claimable, or named) or an LLM; the LLM labeller (the paper's prompt
 * variants, its reply reader, the multiple judges; a schema prompt for other items) is server/llm-labeller.ts. This entry holds what a
 * worker needs; set-up, views, exports and the dataset kind are loaded on first use.
 */

const Value = z.union([z.number().finite(), z.string().trim().min(1).max(100)])

/**
 * A person's label: answers by question id (a form posts every value as text; each is read as the
 * option it names), optional rationale and per-turn answers, and the time from the item being shown.
 */
export const LabellingTurnInput = z.object({
  answers: z.record(z.string().max(32), Value).default({}),
  rationale: z.string().max(MAX_RATIONALE, `A rationale is at most ${MAX_RATIONALE} characters.`).optional(),
  turns: z.record(z.string().regex(/^\d{1,6}$/), z.record(z.string().max(32), Value)).optional(),
  elapsedMs: z.coerce
    .number()
    .int()
    .min(0)
    .max(7 * 86_400_000)
    .optional(),
})
export type LabellingTurnInput = z.output<typeof LabellingTurnInput>

/** The turn form's fields: `answer.<question>`, `turn.<index>.<question>`, `rationale`, `elapsedMs`. */
export function labellingTurnFromForm(f: Record<string, unknown>): unknown {
  const answers: Record<string, unknown> = {}
  const turns: Record<string, Record<string, unknown>> = {}
  for (const [k, v] of Object.entries(f)) {
    if (typeof v !== 'string' || v === '') continue
    const a = /^answer\.(.+)$/.exec(k)
    if (a?.[1]) answers[a[1]] = v
    const t = /^turn\.(\d{1,6})\.(.+)$/.exec(k)
    if (t?.[1] && t[2]) turns[t[1]] = { ...turns[t[1]], [t[2]]: v }
  }
  return {
    answers,
    ...(typeof f.rationale === 'string' ? { rationale: f.rationale } : {}),
    ...(Object.keys(turns).length ? { turns } : {}),
    ...(typeof f.elapsedMs === 'string' ? { elapsedMs: f.elapsedMs } : {}),
  }
}

/** A posted value as the option it names (a form's "2" is the option 2); unknown values stay as given. */
function asOption(ctx: HumanContext<typeof labelling>, id: string, v: OptionValue): OptionValue {
  const q = questionOf(ctx.state.schema, id)
  return q?.options.find((o) => o.value === v || String(o.value) === String(v))?.value ?? v
}

function turnMessage(ctx: HumanContext<typeof labelling>, input: LabellingTurnInput): Produced<LabellingMessage> {
  const { schema } = ctx.state
  const answers = Object.fromEntries(Object.entries(input.answers).map(([id, v]) => [id, asOption(ctx, id, v)]))
  const turns = input.turns
    ? Object.fromEntries(
        Object.entries(input.turns).map(([t, a]) => [
          t,
          Object.fromEntries(Object.entries(a).map(([id, v]) => [id, asOption(ctx, id, v)])),
        ]),
      )
    : undefined
  const rationale = input.rationale?.trim()
  const message: LabelMessage = {
    seq: 1,
    sender: 'annotator',
    kind: 'label',
    schemaVersion: schema.version,
    answers,
    // An empty rationale is no rationale (a form posts the field whether or not it was filled).
    ...(rationale && schema.rationale !== 'off' ? { rationale } : {}),
    ...(turns && Object.keys(turns).length ? { turns } : {}),
    ...(input.elapsedMs !== undefined ? { elapsedMs: input.elapsedMs } : {}),
  }
  try {
    labelling.apply(ctx.state, message)
  } catch (err) {
    if (err instanceof ProtocolError) {
      const missing = /question (\S+) is required/.exec(err.message)?.[1]
      const invalid = /is not an option of (\S+)/.exec(err.message)?.[1]
      const field =
        err.code === 'rationale-off' || err.code === 'rationale-required'
          ? 'rationale'
          : missing
            ? `answer.${missing}`
            : invalid
              ? `answer.${invalid}`
              : err.code === 'unknown-turn'
                ? 'turns'
                : 'answers'
      throw badRequest(err.message, { [field]: [err.message] })
    }
    throw err
  }
  return { message, meta: { audit: { kind: 'label', elapsedMs: input.elapsedMs ?? null } } }
}

function answersText(m: LabellingMessage): string {
  if (m.kind === 'unparseable') return m.reason.slice(0, 500)
  return Object.entries(m.answers)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')
    .slice(0, 500)
}

export const labellingPlugin = definePlugin(labelling, {
  sessionConfig: (raw) => ({ config: labelling.config.parse(raw ?? {}), extras: {} }),
  agents: { llm: llmLabeller },
  demo: labellingDemo,
  human: { input: LabellingTurnInput, toMessage: turnMessage, fromForm: labellingTurnFromForm },
  project: (m: LabellingMessage) => ({
    receiver: 'annotator',
    label: m.kind,
    value: answersText(m),
    detail: m.kind === 'label' ? (m.rationale?.slice(0, 4000) ?? null) : null,
  }),
  projectionNames: { label: 'kind', value: 'answers', detail: 'rationale' },
  setup: () =>
    import('@/protocols/labelling/server/setup').then((m) => ({
      config: m.LabellingSetupConfig,
      plan: m.planLabelling,
      fromForm: m.labellingSetupFromForm,
      // The item alone: the dataset instance's prediction (gold) never reaches a session.
      snapshot: (row) => row.input,
    })),
  views: () =>
    Promise.all([
      import('@/protocols/labelling/server/views'),
      import('@/protocols/labelling/server/pages'),
      import('@/protocols/labelling/server/prompt-lab'),
      import('@/protocols/labelling/server/session-import-page'),
    ]).then(([m, pages, lab, si]) => ({
      session: m.labellingSessionView,
      // Agreement and adjudication open for whoever adjudicates in the study, even without reading it.
      studyPageNeeds: (path: string[]) =>
        path[0] === 'agreement' || path[0] === 'adjudicate' ? ('adjudicate' as const) : ('read' as const),
      // The prompt lab's and the session import's paths are their own; every other page is pages.ts's.
      studyPage: async (actor: Actor, studyId: string, path: string[], args: Record<string, string>) =>
        path[0] === 'prompt-lab'
          ? lab.promptLabStudyPage(actor, studyId, path, args)
          : path.length === 1 && path[0] === 'import-sessions'
            ? { title: 'Import sessions as transcripts', data: await si.sessionImportPage(actor, studyId, args) }
            : pages.labellingStudyPage(actor, studyId, path, args),
      studyPanel: pages.labellingStudyPanel,
    })),
  exports: () =>
    Promise.all([
      import('@/protocols/labelling/server/exports'),
      import('@/protocols/labelling/server/adjudication'),
    ]).then(([m, adj]) => ({ tables: { ...m.labellingExports, ...adj.finalLabelExports }, files: m.labellingFiles })),
  ops: () =>
    Promise.all([
      import('@/protocols/labelling/server/datasets'),
      import('@/protocols/labelling/server/adjudication'),
      import('@/protocols/labelling/server/trec-import'),
      import('@/protocols/labelling/server/session-import'),
      import('@/protocols/labelling/server/lab-runs'),
    ]).then(([m, adj, trec, si, lab]) => ({
      datasets: { ...m.labellingDatasets, ...trec.trecDatasets },
      operations: [adj.adjudicateLabel, si.importSessions, lab.startLabRunOp, lab.getLabRun, lab.retryLabRun],
      rest: [si.importSessionsEndpoint],
      jobs: { [lab.LAB_RUN_JOB]: lab.labRunJob },
    })),
  // After PXP's and ReHAC's: the transcript project imports their demo sessions.
  seed: () =>
    import('@/protocols/labelling/server/seed').then((m) => ({
      seedDemo: m.seedLabellingDemo,
      after: ['pxp', 'rehac'],
    })),
  title: (item) => itemTitle(item),
})
