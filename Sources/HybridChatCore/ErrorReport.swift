import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// Turns any failure into the one line the command prints and its exit status.
///
/// The library's descriptions are already one sentence without secrets; this
/// adds what a person at a terminal should do next where that is clear.
public enum ErrorReport {
  /// The command error for `error`.
  public static func commandError(for error: any Error) -> CommandError {
    if let error = error as? CommandError { return error }
    if let error = error as? HybridInferenceError { return commandError(for: error) }
    if error is CancellationError { return .runtime("cancelled") }
    return .runtime(String(describing: error))
  }

  private static func commandError(for error: HybridInferenceError) -> CommandError {
    switch error {
    case .unavailable(let model, .missingAPIKey):
      return .runtime(missingKey(model: model))
    case .unavailable(let model, .modelNotReady):
      return .runtime("\(model) is unavailable: the model file is missing or not a GGUF file")
    case .offline:
      return .runtime(
        "cannot reach the cloud model's server (\(error)); check the network, or use --mode only-on-device")
    case .emptyPrompt:
      return .usage("the prompt is empty")
    case .invalidOptions(let why):
      return .usage(why)
    case .downloadFailed, .checksumMismatch, .insufficientDiskSpace, .invalidModelSource:
      return .runtime(downloadMessage(for: error))
    default:
      return .runtime(error.description)
    }
  }

  /// A failed `--model` download in words, with what to do about it.
  private static func downloadMessage(for error: HybridInferenceError) -> String {
    switch error {
    case .downloadFailed(let url, let status, let reason):
      let hint =
        switch status {
        case 401, 403: "; a gated or private repository needs a token in HF_TOKEN"
        case 404: "; check the repository, the file and the revision (or the URL)"
        default: ""
        }
      return "the model download from \(url) failed\(status.map { " (HTTP \($0))" } ?? ""): \(reason)\(hint)"
    case .checksumMismatch(let expected, let actual):
      return "the downloaded model's SHA-256 is \(actual), not the expected \(expected); "
        + "the file was removed (check the #sha256= pin, or the source)"
    case .insufficientDiskSpace(let needed, let available):
      return "not enough disk space for the model: it needs \(ByteCount.text(needed)) more, "
        + "\(ByteCount.text(available)) are free (HYBRID_INFERENCE_MODELS or HF_HUB_CACHE can point at another disk)"
    case .invalidModelSource(let why):
      return "the --model source cannot be downloaded: \(why)"
    default:
      return error.description
    }
  }

  /// The message for a cloud model that has no key.
  public static func missingKey(model: String) -> String {
    "the cloud model \(model) needs a Gemini API key: set GEMINI_API_KEY or GOOGLE_API_KEY"
  }
}
