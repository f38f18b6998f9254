import Foundation
import HybridInferenceCore
import HybridInferenceJinja

/// Where the default on-device model lives.
///
/// `HYBRID_LOCAL_MODEL` names any GGUF file. Otherwise the model is the
/// SmolLM2-135M-Instruct file that `make setup` (scripts/fetch-default-model.sh)
/// puts in the cache: `$HYBRID_INFERENCE_CACHE`, else `$XDG_CACHE_HOME/hybrid-inference`,
/// else `~/.cache/hybrid-inference`, under `models/`.
enum DefaultModelLocation {
  static let fileName = "SmolLM2-135M-Instruct.Q4_1.gguf"

  static func path(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    if let path = environment["HYBRID_LOCAL_MODEL"], !path.isEmpty { return path }
    return cacheDirectory(environment: environment) + "/models/" + fileName
  }

  static func cacheDirectory(environment: [String: String]) -> String {
    if let cache = environment["HYBRID_INFERENCE_CACHE"], !cache.isEmpty { return cache }
    if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty { return xdg + "/hybrid-inference" }
    let home = environment["HOME"] ?? NSHomeDirectory()
    return home + "/.cache/hybrid-inference"
  }
}
