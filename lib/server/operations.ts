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
import {
  cancelExperiment,
  pauseExperiment,
  resumeExperiment,
  retrySession,
  startExperiment,
} from '@/lib/server/services/experiment-runs'
import { getExperiment, inspectSession, listExperiments } from '@/lib/server/services/experiment-views'
import { experimentDashboard } from '@/lib/server/services/pxp-dashboard'
import { exportExperiment } from '@/lib/server/services/pxp-export'
import { createTaskTemplate, getTaskTemplate, listTaskTemplates, tryMatch } from '@/lib/server/services/task-templates'
import { createPxpExperiment } from '@/lib/server/services/experiments'
import { exportDebates } from '@/lib/server/services/debate-export'
import {
  createDebate,
  getDebate,
  listDebates,
  mergeDebateLabels,
  submitDebateTurn,
  viewDebate,
} from '@/lib/server/services/debates'
import { getPxpSession, listMySessions, submitHumanMessage } from '@/lib/server/services/pxp-sessions'
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
  setMemberRole,
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
  setMemberRole,
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
  awaitDatasetImport,
  dismissDataset,
  listDatasets,
  getDataset,
  createPxpExperiment,
  listExperiments,
  getExperiment,
  inspectSession,
  experimentDashboard,
  exportExperiment,
  createTaskTemplate,
  listTaskTemplates,
  getTaskTemplate,
  tryMatch,
  startExperiment,
  pauseExperiment,
  resumeExperiment,
  cancelExperiment,
  retrySession,
  listMySessions,
  getPxpSession,
  submitHumanMessage,
  createDebate,
  listDebates,
  getDebate,
  viewDebate,
  submitDebateTurn,
  exportDebates,
  mergeDebateLabels,
]
