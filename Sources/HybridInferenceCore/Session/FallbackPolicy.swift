/// Which failures of a hybrid's primary model its secondary may answer.
///
/// `FallbackPolicy.default` is the library's routing rule: an on-device primary
/// falls back on any failure of its own; a cloud primary only when it is
/// unavailable or offline, so that an API error (a 429, a 5xx) is the app's
/// to see rather than masked by a different model's answer. An app that would
/// rather have an answer adds reasons:
///
/// ```swift
/// let tolerant = HybridModel(primary: cloud, secondary: local,
///                            fallback: FallbackPolicy.default.adding(.rateLimited, .serverError))
/// ```
///
/// Whatever the policy, cancellation never falls back, and neither does a
/// request once one of its tools has run (the tool may have had effects).
/// A struct with static members rather than an enum, so that it can grow.
public struct FallbackPolicy: Sendable, Hashable {
  /// The reasons added to the default rule.
  public private(set) var addedReasons: Set<FallbackReason>

  /// The library's routing rule and nothing more: an on-device primary falls
  /// back on any failure of its own, a cloud primary only when unavailable or offline.
  public static let `default` = FallbackPolicy(addedReasons: [])

  private init(addedReasons: Set<FallbackReason>) {
    self.addedReasons = addedReasons
  }

  /// This policy, also falling back on `reasons` (`.rateLimited`,
  /// `.serverError`, `.timedOut`, `.connectionLost`). Adding a reason every
  /// policy already falls back on changes nothing.
  public func adding(_ reasons: FallbackReason...) -> FallbackPolicy {
    adding(contentsOf: reasons)
  }

  /// This policy, also falling back on every reason in `reasons`.
  public func adding(contentsOf reasons: some Sequence<FallbackReason>) -> FallbackPolicy {
    var policy = self
    policy.addedReasons.formUnion(reasons)
    return policy
  }

  /// Whether the policy falls back on `reason`.
  public func contains(_ reason: FallbackReason) -> Bool {
    FallbackReason.alwaysFallBack.contains(reason) || addedReasons.contains(reason)
  }

  /// The reason a failure of a primary placed at `primaryPlacement` falls
  /// back under this policy; nil when it does not fall back.
  func fallbackReason(after error: any Error, primaryPlacement: ModelPlacement) -> FallbackReason? {
    guard let reason = FallbackReason(classifying: error, primaryPlacement: primaryPlacement),
      contains(reason)
    else { return nil }
    return reason
  }
}

/// Why a hybrid answered from its other model, as a value: on the response
/// (`GenerateContentResponse.fallbackReason`) and, for the reasons that are
/// failures, in a `FallbackPolicy`.
///
/// A struct with static members rather than an enum, so that it can grow.
public struct FallbackReason: Sendable, Hashable, CustomStringConvertible {
  /// A short name (`"rate limited"`), for logs and tests.
  public let name: String

  private init(_ name: String) { self.name = name }

  /// The primary was unavailable (no key, switched off, a missing file).
  /// Every policy falls back on it.
  public static let unavailable = FallbackReason("unavailable")
  /// The primary's server could not be reached (`.offline`). Every policy falls back on it.
  public static let offline = FallbackReason("offline")
  /// An on-device primary failed on its own (a decode error, a request it
  /// cannot serve). Every policy falls back on it.
  public static let onDeviceFailure = FallbackReason("on-device failure")
  /// A cloud primary answered 429 or `RESOURCE_EXHAUSTED` after its retries.
  public static let rateLimited = FallbackReason("rate limited")
  /// A cloud primary answered a 5xx status after its retries.
  public static let serverError = FallbackReason("server error")
  /// A cloud primary was reached but did not answer within its deadline (`.timedOut`).
  public static let timedOut = FallbackReason("timed out")
  /// A cloud primary's connection was lost after the request was sent, or
  /// its stream ended before the answer did (`.connectionLost`,
  /// `.responseTruncated`). The server may have run (and billed) the request.
  public static let connectionLost = FallbackReason("connection lost")
  /// Not a failure: the primary had delivered nothing within
  /// `HybridModel.hedgeAfter`, the secondary was asked too and delivered
  /// first. Adding it to a policy changes nothing.
  public static let hedged = FallbackReason("hedged")

  /// The reasons every policy falls back on (the Architecture article, "Routing rules").
  static let alwaysFallBack: Set<FallbackReason> = [.unavailable, .offline, .onDeviceFailure]

  /// The name.
  public var description: String { name }

  /// What kind of failure `error` is, for a primary at `primaryPlacement`;
  /// nil for cancellation and for a cloud error no policy falls back on (a
  /// 400, a blocked prompt). Every failure of an on-device primary is its own.
  init?(classifying error: any Error, primaryPlacement: ModelPlacement) {
    if FallbackRule.isCancellation(error) { return nil }
    let libraryError = error as? HybridInferenceError
    switch libraryError {
    case .unavailable?:
      self = .unavailable
      return
    case .offline?:
      self = .offline
      return
    default:
      break
    }
    if primaryPlacement == .onDevice {
      self = .onDeviceFailure
      return
    }
    switch libraryError {
    case .cloudAPI(let apiError)?:
      if apiError.httpStatus == 429 || apiError.status == "RESOURCE_EXHAUSTED" {
        self = .rateLimited
      } else if (500..<600).contains(apiError.httpStatus) {
        self = .serverError
      } else {
        return nil
      }
    case .timedOut?:
      self = .timedOut
    case .connectionLost?, .responseTruncated?:
      self = .connectionLost
    default:
      return nil
    }
  }
}
