import { endpoints } from '@/lib/server/api/endpoints'
import { handle } from '@/lib/server/api/handler'

export const dynamic = 'force-dynamic'
export const POST = handle(endpoints.importDataset)
