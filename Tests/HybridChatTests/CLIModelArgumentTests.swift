import Foundation
import HybridInferenceDownload
import XCTest

@testable import HybridChatCore

/// `--model`'s three spellings: a path, `hf:ORG/REPO/FILE[@REVISION]` and
/// `https://...#sha256=<hex>`; a malformed one is a usage error naming what
/// is expected.
final class CLIModelArgumentTests: XCTestCase {
  private static let digest = String(repeating: "0123456789abcdef", count: 4)

  private func parsed(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> ModelArgument? {
    do {
      return try ModelArgument(parsing: text)
    } catch {
      XCTFail("'\(text)' was refused: \(error.message)", file: file, line: line)
      return nil
    }
  }

  /// The usage error for `text`, through the whole parser (exit status 2).
  private func refusal(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
    do {
      _ = try ArgumentParser.parse(["--model", text, "hi"])
      XCTFail("'\(text)' was accepted", file: file, line: line)
      return ""
    } catch {
      XCTAssertEqual(error.exitCode, 2, error.message, file: file, line: line)
      return error.message
    }
  }

  func testPathsStayPaths() {
    XCTAssertEqual(parsed("/m.gguf"), .path("/m.gguf"))
    XCTAssertEqual(parsed("models/m.gguf"), .path("models/m.gguf"))
    XCTAssertEqual(parsed("./hf:x.gguf"), .path("./hf:x.gguf"), "a path can name a file that starts with hf:")
    XCTAssertEqual(parsed("https-notes.gguf"), .path("https-notes.gguf"))
  }

  func testHubFile_defaultsToMain() {
    XCTAssertEqual(
      parsed("hf:HuggingFaceTB/SmolLM2-135M-Instruct-GGUF/smollm2.gguf"),
      .source(
        .huggingFace(repository: "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF", file: "smollm2.gguf", revision: "main"),
        fileName: "smollm2.gguf"))
  }

  func testHubFile_inAFolder_atARevision() {
    XCTAssertEqual(
      parsed("hf:org/repo/q8/sub/model.gguf@v1.2"),
      .source(.huggingFace(repository: "org/repo", file: "q8/sub/model.gguf", revision: "v1.2"), fileName: "model.gguf")
    )
    XCTAssertEqual(
      parsed("hf:org/repo/model.gguf@refs/pr/1"),
      .source(.huggingFace(repository: "org/repo", file: "model.gguf", revision: "refs/pr/1"), fileName: "model.gguf"),
      "a revision may hold '/'")
    XCTAssertEqual(
      parsed("hf:org/repo/a@b.gguf@main"),
      .source(.huggingFace(repository: "org/repo", file: "a@b.gguf", revision: "main"), fileName: "a@b.gguf"),
      "the last '@' starts the revision")
  }

  func testHubSpellingsWithoutAFile_nameTheExpectedForm() {
    for text in ["hf:", "hf:org", "hf:org/repo", "hf:org/repo/", "hf:/repo/m.gguf", "hf:org//m.gguf", "hf:org/repo/m@"]
    {
      let message = refusal(text)
      XCTAssertTrue(message.contains("hf:ORG/REPO/FILE[@REVISION]"), "\(text): \(message)")
      XCTAssertTrue(message.contains("--model"), message)
    }
  }

  func testPinnedURL_dropsTheFragmentFromTheRequest() throws {
    let upper = Self.digest.uppercased()
    let argument = parsed("https://models.example.com/dir/m.gguf?sig=abc#sha256=\(upper)")
    let url = try XCTUnwrap(URL(string: "https://models.example.com/dir/m.gguf?sig=abc"))
    XCTAssertEqual(argument, .source(.url(url, sha256: Self.digest), fileName: "m.gguf"))
    guard case .source(let source, _)? = argument else { return }
    XCTAssertEqual(source.sha256, Self.digest, "the pin is kept lowercase")
    XCTAssertFalse(source.description.contains("#"), source.description)
  }

  /// Plain http parses: the library decides where it may go (loopback only).
  func testPlainHTTPIsLeftToTheLibrary() throws {
    let url = try XCTUnwrap(URL(string: "http://127.0.0.1:8080/files/m.gguf"))
    XCTAssertEqual(
      parsed("http://127.0.0.1:8080/files/m.gguf#sha256=\(Self.digest)"),
      .source(.url(url, sha256: Self.digest), fileName: "m.gguf"))
    XCTAssertNotNil(parsed("http://203.0.113.5/m.gguf#sha256=\(Self.digest)"))
  }

  func testURLWithoutAPin_isAUsageError() {
    XCTAssertTrue(refusal("https://models.example.com/m.gguf").contains("#sha256=<64 hex digits>"))
    XCTAssertTrue(refusal("https://models.example.com/m.gguf#md5=\(Self.digest)").contains("'#sha256=<64 hex digits>'"))
    XCTAssertTrue(refusal("https://models.example.com/m.gguf#").contains("#sha256="))
  }

  func testBadHex_isAUsageError() {
    for digest in [String(Self.digest.dropLast()), Self.digest + "0", String(Self.digest.dropLast()) + "g", ""] {
      let message = refusal("https://models.example.com/m.gguf#sha256=\(digest)")
      XCTAssertTrue(message.contains("64 hexadecimal digits"), "\(digest): \(message)")
    }
  }

  func testOtherSchemesAndHostlessURLs_areUsageErrors() {
    XCTAssertTrue(refusal("ftp://example.com/m.gguf").contains(ModelArgument.expected))
    XCTAssertTrue(refusal("https:///m.gguf#sha256=\(Self.digest)").contains("expects a URL"))
  }
}
