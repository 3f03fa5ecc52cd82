/**
 * A streamed download: lines from an async generator, joined with newlines and sent in chunks of
 * up to ~64 KB (few enqueues for large exports, a quick first byte for small ones). Closing the
 * request stops the generator.
 */
export function streamedDownload(
  lines: AsyncGenerator<string, void, unknown>,
  file: { filename: string; contentType: string },
): Response {
  const encoder = new TextEncoder()
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        let chunk = ''
        for (;;) {
          const next = await lines.next()
          if (next.done) {
            if (chunk) controller.enqueue(encoder.encode(chunk))
            controller.close()
            return
          }
          chunk += `${next.value}\n`
          if (chunk.length > 65_536) break
        }
        controller.enqueue(encoder.encode(chunk))
      } catch (err) {
        console.error('[parley] export failed mid-stream:', err)
        controller.error(err)
      }
    },
    async cancel() {
      await lines.return(undefined)
    },
  })
  return new Response(body, {
    headers: {
      'content-type': file.contentType,
      'content-disposition': `attachment; filename="${file.filename}"`,
      'cache-control': 'no-store',
    },
  })
}
