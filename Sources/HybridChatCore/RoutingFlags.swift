import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// The routing flags of a hybrid mode: `--fallback-on`, `--hedge-after`,
/// `--continue-interrupted`.
public enum RoutingFlags {
  /// The names `--fallback-on` takes, comma-separated, and their reasons.
  public static let reasons: [(name: String, reason: FallbackReason)] = [
    ("rate-limit", .rateLimited), ("server-error", .serverError), ("timeout", .timedOut),
    ("connection-lost", .connectionLost),
  ]

  /// `--fallback-on`'s value as a policy: the default rule plus the named reasons.
  static func policy(_ value: String) throws(CommandError) -> FallbackPolicy {
    var added: [FallbackReason] = []
    for name in value.split(separator: ",", omittingEmptySubsequences: false) {
      let trimmed = name.trimmingCharacters(in: .whitespaces)
      guard let reason = reasons.first(where: { $0.name == trimmed })?.reason else {
        throw .usage(
          "unknown reason '\(trimmed)' for --fallback-on (expected a comma-separated list of "
            + reasons.map(\.name).joined(separator: ", ") + ")")
      }
      added.append(reason)
    }
    return FallbackPolicy.default.adding(contentsOf: added)
  }
}

extension ChatOptions {
  /// The hybrid of `primary` and `secondary` under these options' routing flags.
  public func hybridModel(primary: any LanguageModel, secondary: any LanguageModel) -> HybridModel {
    HybridModel(
      primary: primary, secondary: secondary, fallback: fallbackPolicy,
      hedgeAfter: hedgeAfterMilliseconds.map { .milliseconds($0) },
      continuesInterruptedAnswers: continuesInterruptedAnswers)
  }
}
