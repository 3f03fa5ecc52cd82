// RDKit's WebAssembly in a worker thread, started by lib/tasks/chem.ts through lib/tasks/sandbox.ts
// (the protocol of messages is described there). Plain JavaScript: the worker thread runs this file
// as it is (vitest, the `parley` command) or as Next bundles it.
//
// Any exception out of RDKit is answered as fatal: a WebAssembly trap ("memory access out of
// bounds", which a chain of about 650 carbons caused by overflowing RDKit's stack into its heap)
// leaves the instance's memory damaged for good, so the sandbox replaces this worker rather than
// trust it again. A SMILES RDKit cannot parse is no exception: `get_mol` answers null.

import { parentPort, workerData } from 'node:worker_threads'
import initRDKitModule from '@rdkit/rdkit'

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort)
/** Tests point this at a missing file to make the worker fail to start. */
const wasm = /** @type {{ wasm?: string } | null} */ (workerData)?.wasm
const rd = await initRDKitModule(wasm ? { locateFile: () => wasm } : undefined)

/** @param {string} smiles */
function canonical(smiles) {
  const mol = rd.get_mol(smiles)
  if (!mol) return null
  try {
    return mol.is_valid() ? mol.get_smiles() : null
  } finally {
    mol.delete()
  }
}

/** @param {string} smiles @param {number} width @param {number} height */
function svg(smiles, width, height) {
  const mol = rd.get_mol(smiles)
  if (!mol) return null
  try {
    return mol.is_valid() ? mol.get_svg(width, height) : null
  } finally {
    mol.delete()
  }
}

/** @type {Record<string, (...args: any[]) => unknown>} */
const ops = {
  /** The canonical SMILES of each given SMILES (null where RDKit cannot parse it). */
  canonical: (/** @type {string[]} */ list) => list.map(canonical),
  svg,
  version: () => rd.version(),
}

port.on('message', (/** @type {{ id: number, op: string, args: unknown[] }} */ m) => {
  const fn = ops[m.op]
  if (!fn) {
    port.postMessage({ id: m.id, ok: false, error: `unknown operation ${m.op}` })
    return
  }
  try {
    port.postMessage({ id: m.id, ok: true, value: fn(...m.args) })
  } catch (err) {
    port.postMessage({ id: m.id, ok: false, error: err instanceof Error ? err.message : String(err), fatal: true })
  }
})
port.postMessage({ ready: true })
