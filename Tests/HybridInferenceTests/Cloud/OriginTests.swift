import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Origins, and which of them may carry a key (issue 9, point 1).
final class OriginTests: XCTestCase {
  private func origin(_ string: String) throws -> Origin {
    try XCTUnwrap(Origin(try XCTUnwrap(URL(string: string))), string)
  }

  func testTheDefaultPortIsPartOfTheOrigin() throws {
    XCTAssertEqual(try origin("https://example.com"), try origin("https://EXAMPLE.com:443/v1beta"))
    XCTAssertNotEqual(try origin("https://example.com"), try origin("http://example.com"))
    XCTAssertNotEqual(try origin("http://127.0.0.1:8080"), try origin("http://127.0.0.1:8081"))
    XCTAssertEqual(try origin("http://user:pw@127.0.0.1:8080/x?y").description, "http://127.0.0.1:8080")
  }

  func testOnlyTLSOrLoopbackMayCarryCredentials() throws {
    for allowed in [
      "https://example.com", "http://127.0.0.1:1", "http://127.9.9.9", "http://localhost:80", "http://[::1]:8",
    ] {
      XCTAssertTrue(try origin(allowed).mayCarryCredentials, allowed)
    }
    for refused in ["http://example.com", "http://10.0.0.1", "http://127.0.0.1.example.com", "http://[::2]"] {
      XCTAssertFalse(try origin(refused).mayCarryCredentials, refused)
    }
  }

  func testSameOriginOnlyPolicy() throws {
    let policy = RedirectPolicy.sameOriginOnly
    XCTAssertTrue(policy.allows(from: URL(string: "https://a.com/x"), to: URL(string: "https://a.com:443/y")))
    XCTAssertFalse(policy.allows(from: URL(string: "https://a.com/x"), to: URL(string: "http://a.com/x")))
    XCTAssertFalse(policy.allows(from: URL(string: "https://a.com/x"), to: URL(string: "https://b.com/x")))
    XCTAssertFalse(RedirectPolicy.never.allows(from: URL(string: "https://a.com"), to: URL(string: "https://a.com")))
  }
}
