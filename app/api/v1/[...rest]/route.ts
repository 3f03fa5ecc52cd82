import { json } from '@/lib/server/api/handler'

export const dynamic = 'force-dynamic'
const notFound = () => json({ error: 'No such API route. See /api/v1/openapi.json for the routes that exist.' }, 404)
export { notFound as GET, notFound as POST, notFound as PATCH, notFound as PUT, notFound as DELETE }
