import type { Operation } from '@/lib/server/operation'
import { createApiKey, listMyApiKeys, revokeApiKey } from '@/lib/server/services/api-keys'
import { listAudit } from '@/lib/server/services/audit-log'
import {
  awaitDatasetImport,
  dismissDataset,
  getDataset,
  importDataset,
  listDatasets,
} from '@/lib/server/services/datasets'
import { allPlugins } from '@/lib/server/engine/plugins'
import { protocolPage, protocolPanels, setupFormData } from '@/lib/server/services/protocol-pages'
import {
  cancelRun,
  changeSeatModel,
  createRun,
  getRun,
  listRuns,
  pauseRun,
  resumeRun,
  retrySession,
  retryStalled,
  runDashboard,
  compareChoices,
  compareRuns,
  startRun,
  viewRun,
} from '@/lib/server/services/runs'
import { exportRun, exportRunFile } from '@/lib/server/services/run-export'
import { importRun, listRunImportKinds } from '@/lib/server/services/session-import'
import {
  assignSeats,
  claimSeat,
  claimNext,
  getSession,
  listOpenSeats,
  inspectSession,
  myQueue,
  releaseSeat,
  renewLease,
  saveDraft,
  submitTurn,
} from '@/lib/server/services/sessions'
import {
  createConnection,
  deleteConnection,
  getConnection,
  listConnections,
  moveConnection,
  updateConnection,
} from '@/lib/server/services/connections'
import {
  deletePrice,
  getCall,
  listCalls,
  listConnectionModels,
  listPrices,
  runPrompt,
  testConnection,
  upsertPrice,
} from '@/lib/server/services/llm'
import { createPreset, getPreset, listPresets, updatePreset } from '@/lib/server/services/presets'
import {
  addMember,
  archiveStudy,
  createStudy,
  getStudy,
  listStudies,
  removeMember,
  setMemberRole,
  updateStudy,
} from '@/lib/server/services/studies'
import {
  changePassword,
  createUser,
  issueResetLink,
  listUsers,
  setUserDisabled,
  setUserPassword,
  updateProfile,
  updateUserRole,
} from '@/lib/server/services/users'

/** Every generic operation behind a server action or REST route. */
export const OPERATIONS: Operation<any, any>[] = [
  listStudies,
  getStudy,
  createStudy,
  updateStudy,
  archiveStudy,
  addMember,
  removeMember,
  setMemberRole,
  listUsers,
  createUser,
  updateUserRole,
  setUserDisabled,
  setUserPassword,
  issueResetLink,
  updateProfile,
  changePassword,
  listMyApiKeys,
  createApiKey,
  revokeApiKey,
  listAudit,
  listConnections,
  getConnection,
  createConnection,
  updateConnection,
  moveConnection,
  deleteConnection,
  testConnection,
  listConnectionModels,
  runPrompt,
  listPresets,
  getPreset,
  createPreset,
  updatePreset,
  listCalls,
  getCall,
  listPrices,
  upsertPrice,
  deletePrice,
  importDataset,
  awaitDatasetImport,
  dismissDataset,
  listDatasets,
  getDataset,
  protocolPanels,
  protocolPage,
  setupFormData,
  createRun,
  listRuns,
  getRun,
  viewRun,
  runDashboard,
  compareChoices,
  compareRuns,
  startRun,
  pauseRun,
  resumeRun,
  cancelRun,
  retrySession,
  retryStalled,
  changeSeatModel,
  exportRun,
  importRun,
  listRunImportKinds,
  exportRunFile,
  myQueue,
  getSession,
  submitTurn,
  saveDraft,
  claimSeat,
  claimNext,
  listOpenSeats,
  assignSeats,
  renewLease,
  releaseSeat,
  inspectSession,
]

/**
 * Every operation behind a server action or REST route: the generic ones and each protocol's own
 * (EVINCE's label merges, the scorekeeping import …) from its `ops` capability. The fuzz and
 * permission tests walk this list.
 */
export async function allOperations(): Promise<Operation<any, any>[]> {
  const own = await Promise.all((await allPlugins()).map(async (p) => (await p.ops?.())?.operations ?? []))
  return [...OPERATIONS, ...own.flat()]
}
