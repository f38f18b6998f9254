import HybridInferenceCore
import XCTest

@testable import HybridChatCore

/// A failed `--model` download is one error line that says what to do, and
/// exit status 1.
final class CLIDownloadErrorTests: XCTestCase {
  private func line(_ error: HybridInferenceError) -> CommandError {
    let failure = ErrorReport.commandError(for: error)
    XCTAssertEqual(failure.exitCode, 1, failure.line)
    XCTAssertTrue(failure.line.hasPrefix("hybrid-chat: error: "), failure.line)
    XCTAssertFalse(failure.line.contains("\n"), failure.line)
    return failure
  }

  func testDownloadFailed_namesTheStatusAndWhatToCheck() {
    let gated = line(.downloadFailed(url: "https://huggingface.co/org/repo", status: 401, reason: "unauthorized"))
    XCTAssertEqual(
      gated.message,
      "the model download from https://huggingface.co/org/repo failed (HTTP 401): unauthorized; "
        + "a gated or private repository needs a token in HF_TOKEN")
    let missing = line(.downloadFailed(url: "https://huggingface.co/org/repo", status: 404, reason: "not found"))
    XCTAssertTrue(missing.message.hasSuffix("check the repository, the file and the revision (or the URL)"))
    let dropped = line(.downloadFailed(url: "https://cdn/x", status: nil, reason: "the next download resumes"))
    XCTAssertEqual(dropped.message, "the model download from https://cdn/x failed: the next download resumes")
  }

  func testChecksumMismatch_namesBothDigests() {
    let failure = line(.checksumMismatch(expected: "aa", actual: "bb"))
    XCTAssertEqual(
      failure.message,
      "the downloaded model's SHA-256 is bb, not the expected aa; the file was removed (check the #sha256= pin, or the source)"
    )
  }

  func testInsufficientDiskSpace_inReadableUnits() {
    let failure = line(.insufficientDiskSpace(needed: 98_000_000, available: 12_000_000))
    XCTAssertTrue(
      failure.message.hasPrefix("not enough disk space for the model: it needs 98.0 MB more, 12.0 MB are free"))
    XCTAssertTrue(failure.message.contains("HF_HUB_CACHE"))
  }

  func testInvalidModelSource_pointsAtModel() {
    let failure = line(.invalidModelSource("the file '../x' has an empty, '.' or '..' part"))
    XCTAssertEqual(
      failure.message, "the --model source cannot be downloaded: the file '../x' has an empty, '.' or '..' part")
  }
}
