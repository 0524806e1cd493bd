import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The built UI (`dist/ui`, written by packages/web/build.mjs): `index.html` plus hashed
 * assets, each with `.br` and `.gz` siblings. Loaded once into memory at start.
 */
export interface Asset {
  type: string
  body: Buffer
  br?: Buffer
  gz?: Buffer
  immutable: boolean
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml', '.json': 'application/json', '.map': 'application/json',
}

export function loadAssets(dir: string): Map<string, Asset> | null {
  const manifestFile = join(dir, 'manifest.json')
  if (!existsSync(manifestFile)) return null
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { files: string[] }
  const out = new Map<string, Asset>()
  for (const name of [...manifest.files, 'index.html']) {
    const file = join(dir, name)
    const ext = name.slice(name.lastIndexOf('.'))
    const asset: Asset = { type: TYPES[ext] ?? 'application/octet-stream', body: readFileSync(file), immutable: name !== 'index.html' }
    if (existsSync(file + '.br')) asset.br = readFileSync(file + '.br')
    if (existsSync(file + '.gz')) asset.gz = readFileSync(file + '.gz')
    out.set('/' + name, asset)
  }
  return out
}

/** Picks the encoding the client accepts (brotli, then gzip, then identity). */
export function encodingFor(asset: Asset, acceptEncoding: string | undefined): { body: Buffer; encoding?: 'br' | 'gzip' } {
  const accepts = (acceptEncoding ?? '').toLowerCase().split(',').map((s) => s.trim().split(';')[0])
  if (asset.br && accepts.includes('br')) return { body: asset.br, encoding: 'br' }
  if (asset.gz && accepts.includes('gzip')) return { body: asset.gz, encoding: 'gzip' }
  return { body: asset.body }
}
