import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceDownload
@testable import HybridInferenceGemini
@testable import HybridInferenceLlama

/// A `LocalSystemModel` whose file the library fetches: not ready until the
/// download has finished, then on device in the same session.
final class DownloadedModelSessionTests: XCTestCase {
  func testAPreferOnDeviceHybridAnswersFromTheCloudUntilTheDownloadThenOnDevice() async throws {
    let gemini = try GeminiTestServer()
    defer { gemini.stop() }
    let store = try DownloadTestBed.store()
    let local = LocalSystemModel(
      source: .huggingFace(repository: DownloadTestBed.repository("plain"), file: DownloadTestBed.file),
      store: store, contextSize: 512, threads: 2)
    XCTAssertEqual(local.availability, .unavailable(.modelNotReady))
    XCTAssertEqual(local.modelPath, "")
    let recorder = LogRecorder()
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: gemini.model("echo~" + UUID().uuidString)),
      logHandler: recorder.handler)

    let first = try await session.respond(to: "Hello")
    XCTAssertEqual(first.rawResponse.placement, .cloud)
    XCTAssertEqual(recorder.fallbacks.count, 1)
    guard case .unavailable(let reason)? = recorder.fallbacks.first?.reason else {
      return XCTFail("the fallback was not for unavailability: \(recorder.fallbacks)")
    }
    XCTAssertEqual(reason, .modelNotReady)

    var progress: [DownloadProgress] = []
    for try await update in local.download() { progress.append(update) }
    DownloadTestBed.assertMonotonic(progress, endingAt: Int64(try DownloadTestBed.modelBytes().count))
    XCTAssertEqual(local.availability, .available)
    XCTAssertTrue(local.modelPath.hasSuffix("/" + DownloadTestBed.file))

    let second = try await session.respond(to: "And again")
    XCTAssertEqual(second.rawResponse.placement, .onDevice)
    XCTAssertEqual(recorder.fallbacks.count, 1, "the second turn fell back")
    XCTAssertEqual(session.transcript.entries.count, 4, "the conversation was not carried across")
  }

  func testAModelGivenByPathYieldsOneFinalProgressOrModelNotReady() async throws {
    let path = try DownloadTestBed.modelFile().path
    var updates: [DownloadProgress] = []
    for try await update in LocalSystemModel(modelPath: path).download() { updates.append(update) }
    let size = Int64(try DownloadTestBed.modelBytes().count)
    XCTAssertEqual(updates, [DownloadProgress(completedBytes: size, totalBytes: size)])
    do {
      for try await _ in LocalSystemModel(modelPath: "/nonexistent/model.gguf").download() {}
      XCTFail("a missing file downloaded")
    } catch HybridInferenceError.unavailable(_, let reason) {
      XCTAssertEqual(reason, .modelNotReady)
    }
  }

  func testPrepareDoesNotDownload() async throws {
    let server = try DownloadTestBed.server()
    let repository = DownloadTestBed.repository("plain")
    let local = LocalSystemModel(
      source: .huggingFace(repository: repository, file: DownloadTestBed.file), store: try DownloadTestBed.store())
    do {
      try await local.prepare()
      XCTFail("prepare loaded a model that is not on disk")
    } catch HybridInferenceError.unavailable(_, let reason) {
      XCTAssertEqual(reason, .modelNotReady)
    }
    XCTAssertEqual(try server.stats(repository: repository).hubRequests.count, 0)
  }

  func testAProjectorIsFetchedWithTheModelAndBothAreNeeded() async throws {
    let store = try DownloadTestBed.store()
    let repository = DownloadTestBed.repository("plain")
    let local = LocalSystemModel(
      source: .huggingFace(repository: repository, file: DownloadTestBed.file),
      projector: .huggingFace(repository: repository, file: "mmproj-" + DownloadTestBed.file), store: store,
      contextSize: 512, threads: 2)
    let size = Int64(try DownloadTestBed.modelBytes().count)
    _ = try await DownloadTestBed.Run().download(DownloadTestBed.download(repository, store: store))
    XCTAssertEqual(local.availability, .unavailable(.modelNotReady), "ready without its projector")
    XCTAssertEqual(local.modelPath, "")

    var progress: [DownloadProgress] = []
    for try await update in local.download() { progress.append(update) }

    DownloadTestBed.assertMonotonic(progress, endingAt: 2 * size)
    XCTAssertEqual(local.availability, .available)
    var again: [DownloadProgress] = []
    for try await update in local.download() { again.append(update) }
    XCTAssertEqual(again, [DownloadProgress(completedBytes: 2 * size, totalBytes: 2 * size)])
  }
}
