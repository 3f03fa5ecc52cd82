import type { Operation } from '@/lib/server/operation'
import { createApiKey, listMyApiKeys, revokeApiKey } from '@/lib/server/services/api-keys'
import { listAudit } from '@/lib/server/services/audit-log'
import { getDataset, importDataset, listDatasets } from '@/lib/server/services/datasets'
import { plugins } from '@/lib/server/protocols/registry'
import { createTaskTemplate, getTaskTemplate, listTaskTemplates, tryMatch } from '@/lib/server/services/task-templates'
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
  startRun,
  viewRun,
} from '@/lib/server/services/runs'
import { exportRun, exportRunFile } from '@/lib/server/services/run-export'
import { claimSeat, getSession, inspectSession, myQueue, submitTurn } from '@/lib/server/services/sessions'
import {
  createConnection,
  deleteConnection,
  getConnection,
  listConnections,
  updateConnection,
} from '@/lib/server/services/connections'
import {
  deletePrice,
  getCall,
  listCalls,
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
  updateStudy,
} from '@/lib/server/services/studies'
import {
  changePassword,
  createUser,
  listUsers,
  setUserDisabled,
  updateProfile,
  updateUserRole,
} from '@/lib/server/services/users'
import { assignWork, completeWork, getWork, listMyWork, listStudyWork } from '@/lib/server/services/work'

/** Every operation behind a server action or REST route (the fuzz and permission tests walk this list). */
export const OPERATIONS: Operation<any, any>[] = [
  listStudies,
  getStudy,
  createStudy,
  updateStudy,
  archiveStudy,
  addMember,
  removeMember,
  listMyWork,
  listStudyWork,
  getWork,
  completeWork,
  assignWork,
  listUsers,
  createUser,
  updateUserRole,
  setUserDisabled,
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
  deleteConnection,
  testConnection,
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
  listDatasets,
  getDataset,
  createTaskTemplate,
  listTaskTemplates,
  getTaskTemplate,
  tryMatch,
  createRun,
  listRuns,
  getRun,
  viewRun,
  runDashboard,
  startRun,
  pauseRun,
  resumeRun,
  cancelRun,
  retrySession,
  retryStalled,
  changeSeatModel,
  exportRun,
  exportRunFile,
  myQueue,
  getSession,
  submitTurn,
  claimSeat,
  inspectSession,
  // Each protocol's own operations (EVINCE's label merges, the scorekeeping import …).
  ...Object.values(plugins).flatMap((p) => p.operations ?? []),
]
