// @duckdb/node-api for the interop tests, or exit 77 (meson's "skipped")
// when it is not installed: `npm ci --prefix tests/interop`.
export async function loadDuckDB() {
  try {
    return await import('@duckdb/node-api');
  } catch (e) {
    console.log('SKIP: @duckdb/node-api is not installed (npm ci --prefix tests/interop)');
    process.exit(77);
  }
}
