import Foundation
import GeminiServerProcess
import XCTest

/// A test class against the Python OpenAI stub (Tests/OpenAIServer/openai_stub.py),
/// started before each test with `key` as its API key and stopped after it.
class OpenAIStubTestCase: XCTestCase {
  /// The key the stub expects (and must never see in a log or error).
  static let key = "sk-test-SECRET-0123456789"
  var stub: GeminiServerProcess!

  override func setUp() async throws {
    stub = try OpenAITestServers.stub(apiKey: Self.key)
  }

  override func tearDown() async throws {
    stub?.stop()
  }
}
