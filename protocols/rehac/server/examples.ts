import { db, sql } from '@/lib/server/sdk'
import { MAX_EXAMPLE_CHARS, type PromptExamplesConfig } from '@/protocols/rehac/server/session'
import { type Episode, episodes } from '@/protocols/rehac/server/views'

/**
 * The prompt policy's two few-shot examples from the study's own ReHAC data (rehac.md A8: the paper
 * does not give its examples). Chosen once, when a run whose decider is an LLM is set up, and stored in
 * the run's config (`examples`), so every decision of the run shows the same two.
 *
 * The rule (deterministic, from the content of the study's data):
 * - candidates: ended episodes (status done, not force-finished at the threshold) of the study's ReHAC
 *   runs of the same task kind (QA or SQL), whose trajectory (rendered by core/trajectory.ts through
 *   state-text.ts, the authors' format) is at most MAX_EXAMPLE_CHARS long, and whose question is not
 *   one the new run may play (its answer would be in the prompt);
 * - example 1: the agent-only one (no human step) with the highest R (λ = 0.08); example 2: the one with
 *   at least one human step with the highest R; ties go to fewer steps, then to the trajectory text
 *   that sorts first, then to the earlier run and episode;
 * - when either is missing, the run uses Parley's built-in pair (`parley-default`, about invented facts)
 *   and records why; the set-up is not refused, so a study's first prompt-policy run works.
 */
export async function pickStudyExamples(
  studyId: string,
  task: 'qa' | 'sql',
  excludeQuestions: ReadonlySet<string>,
): Promise<PromptExamplesConfig> {
  const runs = await db.run.findMany({
    where: { studyId, protocol: 'rehac', task },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: { id: true },
  })
  let agentOnly: Episode | null = null
  let withHuman: Episode | null = null
  const better = (a: Episode, b: Episode | null) => {
    if (!b?.result || !a.result) return true
    if (a.result.R !== b.result.R) return a.result.R > b.result.R
    if (a.result.steps !== b.result.steps) return a.result.steps < b.result.steps
    return (a.trajectory ?? '') < (b.trajectory ?? '')
  }
  for (const run of runs)
    for (const e of await episodes(run.id)) {
      if (e.status !== 'done' || !e.result || e.result.reason === 'threshold' || !e.trajectory) continue
      if (e.trajectory.trim().length > MAX_EXAMPLE_CHARS || excludeQuestions.has(e.question.trim())) continue
      if (e.result.humanSteps === 0) {
        if (better(e, agentOnly)) agentOnly = e
      } else if (better(e, withHuman)) withHuman = e
    }
  if (!agentOnly || !withHuman)
    return {
      source: 'parley-default',
      reason: `the study has no finished ${task === 'sql' ? 'SQL' : 'QA'} trajectory ${
        agentOnly ? 'with a human step' : withHuman ? 'by the agent alone' : 'by the agent alone nor with a human step'
      } on a question this run does not play`,
    }
  return {
    source: 'study',
    sessionIds: [agentOnly.sessionId, withHuman.sessionId],
    example1: (agentOnly.trajectory as string).trim(),
    example2: (withHuman.trajectory as string).trim(),
  }
}

/**
 * The questions a run may play: its instances when it names them, else the dataset's first `sample` by
 * index (as the engine takes a sample), else all of the dataset's.
 */
export async function questionsOfRun(datasetId: string, instanceIds?: string[], sample?: number): Promise<Set<string>> {
  const { rows } = instanceIds?.length
    ? await sql().query(`SELECT input->>'question' AS q FROM "Instance" WHERE "datasetId" = $1 AND id = ANY($2)`, [
        datasetId,
        instanceIds,
      ])
    : await sql().query(
        `SELECT input->>'question' AS q FROM "Instance" WHERE "datasetId" = $1 ORDER BY index ${sample ? 'LIMIT $2' : ''}`,
        sample ? [datasetId, sample] : [datasetId],
      )
  return new Set(rows.map((r: { q: string | null }) => (r.q ?? '').trim()).filter(Boolean))
}
