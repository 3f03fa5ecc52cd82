import type { Metadata } from 'next'
import Link from 'next/link'
import { Markdown } from '@/components/ui/markdown'
import {
  AddMemberForm,
  ArchiveStudyForm,
  AssignSeatsForm,
  EditStudyForm,
  MemberRoleForm,
  RemoveMemberForm,
} from '@/components/studies/study-forms'
import { Badge, Card, EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Table, Td } from '@/components/ui/table'
import { requirePage } from '@/lib/server/auth/session'
import { hasScope, isRole } from '@/lib/server/auth/roles'
import {
  isStudyRole,
  mayHoldStudyRole,
  mayTakePart,
  STUDY_ROLE_DESCRIPTIONS,
  STUDY_ROLE_LABELS,
  STUDY_ROLES,
} from '@/lib/server/auth/study-roles'
import { loadForPage } from '@/lib/server/page-data'
import { listDatasets } from '@/lib/server/services/datasets'
import { uploadFormKinds } from '@/lib/server/services/dataset-kinds'
import { getStudy, PROTOCOL_LABELS } from '@/lib/server/services/studies'
import { DismissDatasetForm, ImportDatasetForm } from '@/components/datasets/import-form'
import { ImportProgress } from '@/components/datasets/import-progress'
import { runnableProtocols, uiFor } from '@/components/protocols/registry'
import { maxUploadMb } from '@/lib/limits.mjs'
import { listOpenSeats } from '@/lib/server/services/sessions'
import { protocolPanels } from '@/lib/server/services/protocol-pages'

export const metadata: Metadata = { title: 'Study' }

export default async function StudyPage({ params }: { params: Promise<{ studyId: string }> }) {
  const { studyId } = await params
  const { actor } = await requirePage('studies:read')
  const study = await loadForPage(getStudy, { studyId })
  // What this person may do here: their account's scopes AND their study role (the server checks
  // both again on every action; this only hides what would be refused).
  const canManage = hasScope(actor.role, 'studies:update') && study.access.includes('manage')
  const canWrite = hasScope(actor.role, 'studies:update') && study.access.includes('write')
  const canAssign = hasScope(actor.role, 'work:assign') && canWrite
  const rolesFor = (accountRole: string) =>
    STUDY_ROLES.filter((r) => isRole(accountRole) && mayHoldStudyRole(accountRole, r)).map((r) => ({
      value: r,
      label: STUDY_ROLE_LABELS[r],
    }))
  const openSeats = canAssign ? await loadForPage(listOpenSeats, { studyId }) : null
  const datasets = await loadForPage(listDatasets, { studyId })
  const panels = await loadForPage(protocolPanels, { studyId })
  // The protocols the study's runs use (a study may run several), and the one the study names, if any.
  const protocols =
    study.protocol && !study.runProtocols.some((p) => p.protocol === study.protocol)
      ? [
          ...study.runProtocols,
          { protocol: study.protocol, label: PROTOCOL_LABELS[study.protocol] ?? study.protocol, runs: 0 },
        ]
      : study.runProtocols
  const hasRuns = study.runProtocols.some((p) => p.runs > 0)
  return (
    <>
      <PageHeader
        title={
          <>
            {study.name} {study.archivedAt && <Badge>archived</Badge>}
          </>
        }
        description={study.description || 'No description yet.'}
        actions={
          <div className="flex items-center gap-2">
            {canWrite && hasScope(actor.role, 'connections:manage') && (
              <Link
                href={`/connections?studyId=${study.id}`}
                className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm hover:bg-stone-100"
              >
                Add a model for this study
              </Link>
            )}
            <Link
              href={`/runs?studyId=${study.id}`}
              className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm hover:bg-stone-100"
            >
              Runs
            </Link>
          </div>
        }
      />
      <div className="grid gap-6 xl:grid-cols-2">
        <Card title="Overview">
          <dl className="grid grid-cols-[10rem_1fr] gap-y-2 text-sm">
            <dt className="text-stone-500">{protocols.length > 1 ? 'Protocols' : 'Protocol'}</dt>
            <dd data-testid="study-protocols">
              {protocols.length ? (
                <ul>
                  {protocols.map((p) => (
                    <li key={p.protocol}>
                      {p.runs ? (
                        <>
                          <Link
                            href={`/runs?studyId=${study.id}&protocol=${p.protocol}`}
                            className="text-brand-700 underline"
                          >
                            {p.label}
                          </Link>{' '}
                          <span className="text-stone-600">
                            ({p.runs} run{p.runs === 1 ? '' : 's'})
                          </span>
                        </>
                      ) : (
                        <>
                          {p.label} <span className="text-stone-600">(no runs yet)</span>
                        </>
                      )}
                    </li>
                  ))}
                </ul>
              ) : (
                'None yet: each run chooses its protocol.'
              )}
            </dd>
            <dt className="text-stone-500">Created</dt>
            <dd>
              {formatDate(study.createdAt)} by {study.createdBy?.name ?? 'a removed user'}
            </dd>
            <dt className="text-stone-500">Guidelines</dt>
            <dd>{study.guidelines ? <Markdown>{study.guidelines}</Markdown> : '—'}</dd>
          </dl>
        </Card>

        <Card
          title="Members"
          description={`${study.members.length} people. Study admins manage the study and its members; researchers change its content; adjudicators set final labels; viewers read; experts and annotators see only their own work.`}
        >
          <ul className="divide-y divide-stone-100 text-sm" aria-label="Members">
            {study.members.map((m) => {
              const label = isStudyRole(m.role) ? STUDY_ROLE_LABELS[m.role] : m.role
              return (
                <li key={m.user.id} className="flex flex-wrap items-center justify-between gap-2 py-2">
                  <span>
                    <span className="font-medium">{m.user.name}</span>{' '}
                    <span className="text-stone-500">{m.user.email}</span>
                  </span>
                  <span className="flex items-center gap-3">
                    {canManage ? (
                      <MemberRoleForm
                        studyId={study.id}
                        userId={m.user.id}
                        email={m.user.email}
                        role={m.role}
                        roles={rolesFor(m.user.role)}
                      />
                    ) : (
                      <span title={isStudyRole(m.role) ? STUDY_ROLE_DESCRIPTIONS[m.role] : undefined}>
                        <Badge tone="brand">{label}</Badge>
                      </span>
                    )}
                    {canManage && m.user.id !== actor.userId && (
                      <RemoveMemberForm studyId={study.id} userId={m.user.id} email={m.user.email} />
                    )}
                  </span>
                </li>
              )
            })}
          </ul>
          {canManage && (
            <div className="mt-4 border-t border-stone-100 pt-4">
              <AddMemberForm
                studyId={study.id}
                roles={STUDY_ROLES.map((r) => ({ value: r, label: STUDY_ROLE_LABELS[r] }))}
              />
            </div>
          )}
        </Card>

        {openSeats && (
          <Card
            title="Seats to fill"
            description="Claimable seats of this study's runs that no one holds. Name a member on some of them: the sessions appear in their work queue."
          >
            {openSeats.length === 0 ? (
              <EmptyState title="No free seats.">
                A run with a claimable seat offers it here while its sessions are open and no one holds it.
              </EmptyState>
            ) : (
              <Table caption="Free seats" head={['Run', 'Seat', 'Free']}>
                {openSeats.map((o) => (
                  <tr key={`${o.runId}/${o.seat}`}>
                    <Td>
                      <Link href={`/runs/${o.runId}`} className="text-brand-700 underline">
                        {o.runName}
                      </Link>
                    </Td>
                    <Td>{o.seatLabel}</Td>
                    <Td>{o.free}</Td>
                  </tr>
                ))}
              </Table>
            )}
            {/* Always mounted once the study has had a free seat to offer, so the confirmation of the
                assignment that took the last one stays on the page after it re-renders empty. */}
            {(openSeats.length > 0 || hasRuns) && (
              <div className="mt-4 border-t border-stone-100 pt-4">
                <AssignSeatsForm
                  studyId={study.id}
                  slots={openSeats.map((o) => ({
                    value: `${o.runId}/${o.seat}`,
                    label: `${o.runName} · ${o.seatLabel} (${o.free} free)`,
                  }))}
                  members={study.members
                    .filter((m) => isRole(m.user.role) && mayTakePart(m.user.role, m.role))
                    .map((m) => ({ value: m.user.id, label: `${m.user.name} (${m.user.email})` }))}
                />
              </div>
            )}
          </Card>
        )}

        {panels.map((panel) => {
          const Panel = uiFor(panel.protocol)?.StudyPanel
          return Panel ? <Panel key={panel.protocol} studyId={study.id} data={panel.data} /> : null
        })}

        <Card title="Datasets" description="The instances protocols run on: input x, prediction y, explanation e.">
          {datasets.length === 0 ? (
            <EmptyState title="No datasets yet." />
          ) : (
            <ul className="divide-y divide-stone-100 text-sm">
              {datasets.map((d) => (
                <li key={d.id} className="py-2">
                  <div className="flex items-center justify-between gap-3">
                    {d.status === 'ready' ? (
                      <Link href={`/datasets/${d.id}`} className="font-medium text-brand-700 underline">
                        {d.name}
                      </Link>
                    ) : (
                      <span className="font-medium">
                        {d.name} <Badge tone={d.status === 'failed' ? 'red' : 'amber'}>{d.status}</Badge>
                      </span>
                    )}
                    {d.status === 'ready' ? (
                      <span className="text-stone-500">
                        {d.kind.toUpperCase()} · {d._count.instances} instances
                        {d._count.assets ? ` · ${d._count.assets} images` : ''}
                      </span>
                    ) : d.status === 'importing' ? (
                      <ImportProgress datasetId={d.id} rowsDone={d.rowsDone} rowsTotal={d.rowsTotal} />
                    ) : (
                      canWrite && <DismissDatasetForm studyId={study.id} datasetId={d.id} />
                    )}
                  </div>
                  {d.status === 'failed' && d.error && (
                    <p className="mt-1 whitespace-pre-wrap text-xs text-red-700" role="alert">
                      {d.error}
                    </p>
                  )}
                </li>
              ))}
            </ul>
          )}
          {canWrite && (
            <div className="mt-4 border-t border-stone-100 pt-4">
              <ImportDatasetForm studyId={study.id} maxUploadMb={maxUploadMb()} kinds={await uploadFormKinds()} />
              {runnableProtocols().map(({ id, ui }) =>
                ui.DatasetImport ? (
                  <div key={id} className="mt-4 border-t border-stone-100 pt-4">
                    <ui.DatasetImport studyId={study.id} />
                  </div>
                ) : null,
              )}
            </div>
          )}
        </Card>

        {canManage && (
          <Card title="Settings">
            <EditStudyForm study={study} protocols={PROTOCOL_LABELS} />
            <div className="mt-4 border-t border-stone-100 pt-4">
              <ArchiveStudyForm studyId={study.id} archived={Boolean(study.archivedAt)} />
            </div>
          </Card>
        )}
      </div>
    </>
  )
}
