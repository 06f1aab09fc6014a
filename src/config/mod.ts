/**
 * Configuration: the manifest schema and its typed result, and the loader that turns a manifest
 * file (HCL or JSON) plus the environment into a validated `Config`.
 *
 * @module
 */
export * from "./schema.ts";
export {
  ConfigError,
  DEFAULT_SQLITE_PATH,
  ENV_OVERRIDES,
  type EnvOverride,
  loadConfig,
  maskSecrets,
  parseConfig,
  type ParseConfigOptions,
} from "./load.ts";
