import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Decides whether a failure of a hybrid's primary model may be answered by
/// its secondary (DESIGN.md §2).
enum FallbackRule {
  /// - On-device primary: every failure of its own falls back (unsupported
  ///   request, context window exceeded, a load or decode error), because the
  ///   cloud can usually serve what the device cannot.
  /// - Cloud primary: only being offline falls back; an API error (400, 403,
  ///   404, 429, 5xx, a blocked prompt) is the app's to see, not to mask.
  /// - Either way an unavailable primary falls back, and cancellation never does.
  static func allowsFallback(after error: any Error, primaryPlacement: ModelPlacement) -> Bool {
    if isCancellation(error) { return false }
    if case .unavailable? = error as? HybridInferenceError { return true }
    switch primaryPlacement {
    case .onDevice:
      return true
    case .cloud:
      if case .offline? = error as? HybridInferenceError { return true }
      return false
    }
  }

  static func isCancellation(_ error: any Error) -> Bool {
    if error is CancellationError { return true }
    if let urlError = error as? URLError, urlError.code == .cancelled { return true }
    return Task.isCancelled
  }
}
