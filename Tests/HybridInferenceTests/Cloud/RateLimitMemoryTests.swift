import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// `RateLimitMemory`'s keys: a credential's identity belongs to it alone,
/// even after it is gone, so a new model never inherits a dead one's 429.
final class RateLimitMemoryTests: XCTestCase {
  private func tokenAuthorizer() throws -> RemoteAuthorizer {
    try XCTUnwrap(
      RemoteAuthorizer(
        .bearerToken { "ya29.token" }, keyPlacement: .bearer, metadataHost: nil, options: RequestOptions(),
        log: .silent))
  }

  /// Each model value made with a token provider has a token cache of its
  /// own; one made after another was freed (often at the same address)
  /// still has an identity of its own.
  func testATokenCredentialsIdentity_isNeverThatOfAnEarlierOne() throws {
    var seen = Set<Int>()
    for _ in 0..<200 {
      let identity = try tokenAuthorizer().identity
      XCTAssertTrue(seen.insert(identity).inserted, "identity \(identity) was an earlier credential's")
    }
    // Copies of one model share the cache, and so the identity.
    let authorizer = try tokenAuthorizer()
    let copy = authorizer
    XCTAssertEqual(authorizer.identity, copy.identity)
  }

  /// A remembered 429 is keyed by the credential: a new token credential on
  /// the same server and model is not limited by an earlier one's.
  func testANewTokenCredential_isNotLimitedByAnEarlierOnes429() throws {
    let memory = RateLimitMemory()
    let origin = try XCTUnwrap(URL(string: "https://example.com").flatMap(Origin.init))
    for _ in 0..<50 {
      let key = RateLimitMemory.Key(origin: origin, model: "m", credential: try tokenAuthorizer())
      XCTAssertNil(memory.verdict(for: key), "a fresh credential inherited a 429")
      memory.record(
        CloudAPIError(httpStatus: 429, status: "RESOURCE_EXHAUSTED", message: "slow down", retryDelay: .seconds(60)),
        for: key)
      XCTAssertNotNil(memory.verdict(for: key))
    }
  }
  /// The key of a model value that is gone is never asked again: its
  /// expired entry is swept when the memory grows, not kept for good.
  func testExpiredEntries_areSweptAsNewOnesCome() async throws {
    let memory = RateLimitMemory()
    let origin = try XCTUnwrap(URL(string: "https://example.com").flatMap(Origin.init))
    let limited = CloudAPIError(httpStatus: 429, message: "slow down", retryDelay: .milliseconds(1))
    for index in 0..<500 {
      memory.record(limited, for: RateLimitMemory.Key(origin: origin, model: "m\(index)", credential: nil))
    }
    try await Task.sleep(for: .milliseconds(20))  // every delay is over
    memory.record(limited, for: RateLimitMemory.Key(origin: origin, model: "last", credential: nil))
    XCTAssertLessThanOrEqual(memory.count, RateLimitMemory.sweepThreshold)
  }
}
