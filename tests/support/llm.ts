import { afterAll, beforeAll } from 'vitest'
import { type FakeLlmServer, startFakeLlmServer } from '@/lib/llm/fake-server'
import { db } from '@/lib/server/db'

/**
 * A fake OpenAI-compatible server for one test file (models "gen" and "judge"), closed with the
 * database client after the file. Returns a getter because the server starts in beforeAll.
 */
export function useFakeLlm(): () => FakeLlmServer {
  let server: FakeLlmServer | undefined
  beforeAll(async () => {
    server = await startFakeLlmServer({ models: ['gen', 'judge'] })
  })
  afterAll(async () => {
    await server?.close()
    await db.$disconnect()
  })
  return () => {
    if (!server) throw new Error('the fake LLM server is not running yet')
    return server
  }
}

/** A study-owned connection to the fake server, "gen" by default. */
export function fakeConnection(studyId: string, server: FakeLlmServer) {
  return db.llmConnection.create({
    data: {
      studyId,
      name: 'fake',
      provider: 'openai-compatible',
      baseUrl: server.url,
      defaultModel: 'gen',
      timeoutMs: 3000,
    },
  })
}
