import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { Unzip, type UnzipDecoder, type UnzipDecoderConstructor, UnzipInflate, UnzipPassThrough } from 'fflate'
import { crossCopy } from '../cross-copy'

/**
 * Zip archives read as a stream (fflate's `Unzip`), with bounded memory and inflation:
 *
 *  - the archive arrives in small slices (`SLICE` bytes), because fflate inflates everything it is
 *    given in one go, and DEFLATE expands at most about 1,032:1, so one slice never inflates to more
 *    than a few MB however the archive was crafted;
 *  - an entry's declared size (its local header) is checked against what is left of the budget
 *    before it is inflated, and the bytes are counted while it inflates: an entry that inflates past
 *    its declared size (the header lied) or past the budget stops everything at once;
 *  - entries nobody wants are skipped without being inflated or kept (a decoder that drops them;
 *    fflate would otherwise hold the compressed bytes of every entry that was never started).
 */
const SLICE = 4 * 1024

export class ZipTooLarge extends Error {
  constructor(readonly limitBytes: number) {
    super(`The archive inflates to more than ${limitBytes} bytes.`)
    this.name = 'ZipTooLarge'
  }
}
crossCopy(ZipTooLarge, 'ZipTooLarge')

export class ZipUnreadable extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ZipUnreadable'
  }
}
crossCopy(ZipUnreadable, 'ZipUnreadable')

export interface ZipEntry {
  name: string
  /** The size the entry's local header declares once inflated; absent in archives written as a stream. */
  declaredSize: number | undefined
}

const EMPTY = new Uint8Array(0)

/** A decoder that inflates only the entries `wanted` accepts and drops the others unread. */
function selective(Base: UnzipDecoderConstructor, wanted: (name: string) => boolean): UnzipDecoderConstructor {
  return class Selective implements UnzipDecoder {
    static compression = Base.compression
    ondata: UnzipDecoder['ondata'] = () => {}
    private readonly inner: UnzipDecoder | null
    constructor(name: string, size?: number, originalSize?: number) {
      this.inner = wanted(name) ? new Base(name, size, originalSize) : null
      if (this.inner) this.inner.ondata = (err, data, final) => this.ondata(err, data, final)
    }
    push(chunk: Uint8Array, final: boolean) {
      if (this.inner) this.inner.push(chunk, final)
      else if (final) this.ondata(null, EMPTY, true)
    }
    terminate() {
      this.inner?.terminate?.()
    }
  }
}

/** Push an archive through `unzip` slice by slice, yielding the event loop between pieces. */
async function feed(unzip: Unzip, chunks: AsyncIterable<Uint8Array>, afterPush: () => Promise<void>) {
  const push = (data: Uint8Array, final: boolean) => {
    try {
      unzip.push(data, final)
    } catch (err) {
      if (err instanceof ZipTooLarge || err instanceof ZipUnreadable) throw err
      throw new ZipUnreadable((err as Error).message)
    }
  }
  let first = true
  for await (const chunk of chunks) {
    if (first && chunk.length) {
      first = false
      // A zip starts with a local file header (or, empty, with the end of its directory): "PK\3\4" / "PK\5\6".
      const sig = chunk.length >= 4 ? Buffer.from(chunk.subarray(0, 4)).readUInt32LE(0) : 0
      if (sig !== 0x04034b50 && sig !== 0x06054b50) throw new ZipUnreadable('not a zip archive')
    }
    for (let i = 0; i < chunk.length; i += SLICE) {
      push(chunk.subarray(i, i + SLICE), false)
      await afterPush()
    }
    await yieldToLoop()
  }
  push(EMPTY, true)
  await afterPush()
}

/** The entries of an archive (names and declared sizes), without inflating anything. */
export async function listZip(chunks: AsyncIterable<Uint8Array>): Promise<ZipEntry[]> {
  const entries: ZipEntry[] = []
  const unzip = new Unzip((file) => {
    entries.push({ name: file.name, declaredSize: file.originalSize })
    file.ondata = () => {}
    file.start()
  })
  unzip.register(selective(UnzipPassThrough, () => false))
  unzip.register(selective(UnzipInflate, () => false))
  await feed(unzip, chunks, async () => {})
  return entries
}

/**
 * Inflate the entries `want` accepts, handing each one whole to `onFile` (awaited, in archive
 * order). Throws `ZipTooLarge` as soon as the wanted entries would inflate to more than `maxBytes`
 * in all (by their declared sizes before inflating, by the bytes counted while inflating), and
 * `ZipUnreadable` for a damaged archive or an entry that inflates past its declared size.
 */
export async function extractZip(
  chunks: AsyncIterable<Uint8Array>,
  opts: {
    want: (name: string) => boolean
    maxBytes: number
    onFile: (name: string, bytes: Buffer) => Promise<void>
  },
): Promise<void> {
  let total = 0
  let failure: Error | undefined
  const done: Array<{ name: string; bytes: Buffer }> = []
  const unzip = new Unzip((file) => {
    if (!opts.want(file.name)) {
      file.ondata = () => {}
      file.start()
      return
    }
    const declared = file.originalSize
    if (declared !== undefined && total + declared > opts.maxBytes) throw new ZipTooLarge(opts.maxBytes)
    const parts: Uint8Array[] = []
    let size = 0
    file.ondata = (err, data, final) => {
      if (failure) return
      if (err) {
        failure = new ZipUnreadable(`${file.name}: ${err.message}`)
        return
      }
      size += data.length
      total += data.length
      if (declared !== undefined && size > declared) {
        failure = new ZipUnreadable(`${file.name} inflates to more than the ${declared} bytes its header declares.`)
        file.terminate()
        return
      }
      if (total > opts.maxBytes) {
        failure = new ZipTooLarge(opts.maxBytes)
        file.terminate()
        return
      }
      if (data.length) parts.push(data)
      if (final) done.push({ name: file.name, bytes: Buffer.concat(parts, size) })
    }
    file.start()
  })
  unzip.register(selective(UnzipPassThrough, opts.want))
  unzip.register(selective(UnzipInflate, opts.want))
  await feed(unzip, chunks, async () => {
    if (failure) throw failure
    while (done.length) {
      const f = done.shift() as { name: string; bytes: Buffer }
      await opts.onFile(f.name, f.bytes)
    }
  })
}
