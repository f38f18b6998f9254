import Foundation
import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// The two models the command can use, and the model each mode asks.
///
/// Both are built once, so switching modes in a chat reuses the loaded
/// on-device model and its KV cache.
struct ModelCatalog: Sendable {
  let local: LocalSystemModel
  let cloud: any LanguageModel
  /// Whether `--model` was given; only the default model gets the `make setup` hint.
  private let explicitModelPath: Bool
  /// The routing flags the hybrid modes are built with.
  private let options: ChatOptions

  init(options: ChatOptions, logHandler: LogHandler) {
    local = options.localModel
    explicitModelPath = options.model != nil
    self.options = options
    cloud = CloudModelFactory.make(options: options, logHandler: logHandler)
  }

  /// The mode when `--mode` is not given.
  var defaultMode: InferenceMode {
    InferenceMode.defaultMode(cloudKeyIsSet: cloud.availability != .unavailable(.missingAPIKey))
  }

  /// The model for `mode`, after checking that it can answer at all, so that
  /// a missing key or file is one clear line before anything loads.
  func model(for mode: InferenceMode) throws(CommandError) -> any LanguageModel {
    switch mode {
    case .onlyOnDevice:
      if let problem = localProblem { throw .runtime(problem) }
      return local
    case .onlyCloud:
      if let problem = cloudProblem { throw .runtime(problem) }
      return cloud
    case .preferOnDevice, .preferCloud:
      // A hybrid with one usable model still answers (and logs the fallback);
      // with none it could only fail, so say why for both.
      if let localProblem, let cloudProblem {
        throw .runtime("no model can answer: \(localProblem); \(cloudProblem)")
      }
      return mode == .preferOnDevice
        ? options.hybridModel(primary: local, secondary: cloud)
        : options.hybridModel(primary: cloud, secondary: local)
    }
  }

  /// Why the on-device model cannot answer, nil when it can (as far as can be
  /// told without loading it).
  var localProblem: String? {
    switch local.availability {
    case .available:
      return nil
    case .unavailable(.modelNotReady) where local.source != nil && local.modelPath.isEmpty:
      // Only a mode that may use the device downloads it (`ModelDownloadStep`).
      return "the model \(local.source.map(String.init(describing:)) ?? "") is not downloaded yet; "
        + "a mode that uses the device (not only-cloud) downloads it"
    case .unavailable(.modelNotReady) where !FileManager.default.fileExists(atPath: local.modelPath):
      let hint = explicitModelPath ? "" : " (run `make setup` to fetch the default model)"
      return "model file not found: \(local.modelPath)\(hint)"
    case .unavailable(.modelNotReady):
      return "not a usable GGUF model file: \(local.modelPath)"
    case .unavailable(let reason):
      return "the on-device model is unavailable: \(reason)"
    }
  }

  /// Why the cloud model cannot answer, nil when it can.
  var cloudProblem: String? {
    switch cloud.availability {
    case .available: nil
    case .unavailable(.missingAPIKey): ErrorReport.missingKey(model: cloud.modelVersion)
    case .unavailable(.missingProject):
      "the cloud model \(cloud.modelVersion) on Vertex AI needs a project: pass --vertex-project or set GOOGLE_CLOUD_PROJECT"
    case .unavailable(let reason): "the cloud model \(cloud.modelVersion) is unavailable: \(reason)"
    }
  }
}
