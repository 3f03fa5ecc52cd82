import { constants, crc32, deflateRawSync } from 'node:zlib'

/**
 * A zip "bomb" built cheaply: `inflatedMb` MB of zeros as one deflated entry, made by repeating one
 * compressed megabyte (each ends on a full flush, so the pieces chain into one valid DEFLATE stream)
 * and closing with an empty final block: about 1 KB per inflated MB, and the test never holds the
 * inflated data. `declaredSize` is what the headers claim the entry inflates to (the truth unless a
 * test makes them lie).
 */
export function zipBomb(opts: {
  name?: string
  inflatedMb: number
  declaredSize?: number
  /** Written as a stream: no sizes in the local header (they follow the data), as fflate's Zip does. */
  streamed?: boolean
}): Uint8Array<ArrayBuffer> {
  const name = Buffer.from(opts.name ?? 'bomb.png')
  const mb = Buffer.alloc(1024 * 1024)
  const unit = deflateRawSync(mb, { level: 9, finishFlush: constants.Z_FULL_FLUSH })
  const last = deflateRawSync(Buffer.alloc(0))
  const data = Buffer.concat([...Array.from({ length: opts.inflatedMb }, () => unit), last])
  let crc = 0
  for (let i = 0; i < opts.inflatedMb; i++) crc = crc32(mb, crc)
  const size = opts.declaredSize ?? opts.inflatedMb * mb.length
  const local = Buffer.alloc(30)
  local.writeUInt32LE(0x04034b50, 0)
  local.writeUInt16LE(20, 4) // version needed
  local.writeUInt16LE(opts.streamed ? 8 : 0, 6) // flags: bit 3 = sizes in a data descriptor
  local.writeUInt16LE(8, 8) // deflate
  local.writeUInt32LE(0, 10) // time, date
  if (!opts.streamed) {
    local.writeUInt32LE(crc >>> 0, 14)
    local.writeUInt32LE(data.length, 18)
    local.writeUInt32LE(size, 22)
  }
  local.writeUInt16LE(name.length, 26)
  local.writeUInt16LE(0, 28)
  const central = Buffer.alloc(46)
  central.writeUInt32LE(0x02014b50, 0)
  central.writeUInt16LE(20, 4) // made by
  central.writeUInt16LE(20, 6) // needed
  central.writeUInt16LE(opts.streamed ? 8 : 0, 8)
  central.writeUInt16LE(8, 10)
  central.writeUInt32LE(0, 12)
  central.writeUInt32LE(crc >>> 0, 16)
  central.writeUInt32LE(data.length, 20)
  central.writeUInt32LE(size, 24)
  central.writeUInt16LE(name.length, 28)
  // extra, comment, disk, internal and external attributes, local header offset: all 0
  const descriptor = Buffer.alloc(opts.streamed ? 16 : 0)
  if (opts.streamed) {
    descriptor.writeUInt32LE(0x08074b50, 0)
    descriptor.writeUInt32LE(crc >>> 0, 4)
    descriptor.writeUInt32LE(data.length, 8)
    descriptor.writeUInt32LE(size, 12)
  }
  const cdOffset = local.length + name.length + data.length + descriptor.length
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(1, 8)
  end.writeUInt16LE(1, 10)
  end.writeUInt32LE(central.length + name.length, 12)
  end.writeUInt32LE(cdOffset, 16)
  return new Uint8Array(Buffer.concat([local, name, data, descriptor, central, name, end]))
}
