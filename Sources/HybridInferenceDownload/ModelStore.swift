import Foundation

/// Where downloaded model files live, and how the Hugging Face hub is
/// reached.
///
/// `.url` sources go to `directory`, in a folder named by the file's
/// SHA-256 (`<directory>/<sha256>/<file name>`), so two URLs that name
/// different files of one name never meet and an app can tell a file is
/// there without hashing it. `.huggingFace` sources go to the hub cache in
/// the layout huggingface_hub and llama.cpp use (`models--org--name/blobs`,
/// `snapshots`, `refs`), so a file any of them fetched is found by the
/// others. Copying a hub cache, or this directory, onto a machine seeds it.
///
/// ```swift
/// print(ModelStore.default.directory.path)   // ~/.cache/hybrid-inference/models
/// let store = ModelStore(directory: URL(fileURLWithPath: "/var/lib/app/models"))
/// ```
public struct ModelStore: Sendable, Hashable {
  /// Where `.url` downloads go.
  public let directory: URL
  /// The hub cache; nil reads the environment at each use (`HF_HUB_CACHE`,
  /// else `HF_HOME/hub`, else `~/.cache/huggingface/hub`).
  public let hubCache: URL?
  /// The hub (or a mirror of it); nil reads `HF_ENDPOINT` at each use, else
  /// https://huggingface.co.
  public let hubEndpoint: URL?
  /// The token for gated and private repositories, sent to the hub's origin
  /// only; nil reads `HF_TOKEN`, else the token file (`HF_TOKEN_PATH`, else
  /// `HF_HOME/token`, else `~/.cache/huggingface/token`).
  public let hubToken: String?

  /// A store in `directory`; the hub's cache, endpoint and token from the
  /// environment unless given.
  public init(directory: URL, hubCache: URL? = nil, hubEndpoint: URL? = nil, hubToken: String? = nil) {
    self.directory = directory
    self.hubCache = hubCache
    self.hubEndpoint = hubEndpoint
    self.hubToken = hubToken
  }

  /// `HYBRID_INFERENCE_MODELS`, else `$XDG_CACHE_HOME/hybrid-inference/models`,
  /// else `~/.cache/hybrid-inference/models`; the hub's settings from the
  /// environment.
  public static var `default`: ModelStore {
    let environment = HubEnvironment(ProcessInfo.processInfo.environment)
    return ModelStore(directory: environment.modelsDirectory)
  }

  /// The hub settings this store uses now: its own, else the environment's.
  func hub(_ environment: HubEnvironment = HubEnvironment(ProcessInfo.processInfo.environment)) -> HubSettings {
    HubSettings(
      cache: hubCache ?? environment.hubCache, endpoint: hubEndpoint ?? environment.endpoint,
      token: hubToken ?? environment.token())
  }
}

/// The hub's cache, endpoint and token as one download uses them.
struct HubSettings: Sendable {
  var cache: URL
  var endpoint: URL
  var token: String?
}
