// Runs a wasm32-wasi program under Node's WASI (preview1): `node tests/wasi_run.mjs prog.wasm [args...]`.
// build.py's `node-wasi` runner, and the CMAKE_CROSSCOMPILING_EMULATOR of platform/cmake/wasm32-wasi.cmake.
//
// - The guest sees two preopened directories: "/tmp", a fresh scratch directory on the host (removed
//   afterwards; the file suites make their mkdtemp directories in it), and ".", the host's current
//   directory (where the examples write their files).
// - argv is the program's name followed by the arguments; the environment is passed through.
// - The guest's exit status becomes ours; a trap (abort, unreachable, an uncaught longjmp) prints the
//   error on stderr and exits with 134 (as SIGABRT would).
// - Node's "WASI is an experimental feature" warning is dropped, so stdout and stderr carry only the
//   program's own output (build.py parses cmocka's summary from them).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  const type = typeof rest[0] === 'string' ? rest[0] : rest[0] && rest[0].type;
  if (type === 'ExperimentalWarning' && String(warning).includes('WASI')) return;
  return emitWarning.call(process, warning, ...rest);
};
const { WASI } = await import('node:wasi');

const [program, ...args] = process.argv.slice(2);
if (!program) {
  process.stderr.write('usage: node wasi_run.mjs program.wasm [args...]\n');
  process.exit(2);
}

const scratch = mkdtempSync(join(tmpdir(), 'cio-wasi-'));
let status = 1;
try {
  const wasi = new WASI({
    version: 'preview1',
    args: [basename(program), ...args],
    env: { ...process.env },
    preopens: { '/tmp': scratch, '.': process.cwd() },
    returnOnExit: true,
  });
  const module = await WebAssembly.compile(readFileSync(program));
  // getImportObject() arrived in Node 19.8; Debian 12's Node 18 has only wasiImport (the same functions).
  const imports = typeof wasi.getImportObject === 'function'
    ? wasi.getImportObject() : { wasi_snapshot_preview1: wasi.wasiImport };
  const instance = await WebAssembly.instantiate(module, imports);
  try {
    status = wasi.start(instance);
  } catch (e) {
    process.stderr.write(`wasi_run: ${basename(program)} trapped: ${e && e.stack ? e.stack : e}\n`);
    status = 134;
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.exitCode = status;
