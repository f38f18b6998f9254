import CHybridOS
import CLlama
import Foundation
import OpenAIServers
import TestPrerequisites
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// libmtmd, llama.cpp's multimodal library, reached at run time: its
/// declarations against the installed header, the reference CLI on the tiny
/// vision model, a projector loaded for a loaded model, and the typed error
/// where libmtmd is missing.
final class ProjectorTests: XCTestCase {
  /// The llama.cpp prefix the build uses: the first `PKG_CONFIG_PATH` entry's
  /// (`.../lib/pkgconfig`), else the set-up's.
  private static var prefix: String? {
    if let entry = ProcessInfo.processInfo.environment["PKG_CONFIG_PATH"]?.split(separator: ":").first {
      let prefix = URL(fileURLWithPath: String(entry)).deletingLastPathComponent().deletingLastPathComponent().path
      if FileManager.default.fileExists(atPath: prefix + "/include/llama.h") { return prefix }
    }
    return LlamaServerProcess.setUpPrefix
  }

  private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  private func loadTinyVisionModel() async throws -> LlamaModel {
    let path = try LocalTestModels.require(LocalTestModels.tinyVisionPath)
    return try await LocalSystemModel(modelPath: path, contextSize: 512, threads: 2).loadedModel(progress: nil)
  }

  private func sharedLibrary() throws -> MTMDLibrary {
    switch MTMDLibrary.shared {
    case .success(let library): return library
    case .failure(let error): throw Prerequisite.missing("libmtmd (scripts/setup-llama.sh builds it): \(error)")
    }
  }

  /// The library's own declarations of libmtmd (it builds without mtmd.h)
  /// are the installed header's, prototype for prototype and field for field.
  func testDeclarationsAreTheInstalledHeaders() throws {
    guard let prefix = Self.prefix else { throw Prerequisite.missing("the llama.cpp prefix") }
    let run = try HubTestServer.run(
      "/bin/bash",
      [Self.repository.appendingPathComponent("scripts/check-mtmd-declarations.sh").path, prefix + "/include"],
      environment: ProcessInfo.processInfo.environment)
    if run.status == 2 { throw Prerequisite.missing("mtmd.h and a C compiler: \(run.stderr)") }
    XCTAssertEqual(run.status, 0, "mtmd-declarations.h differs from \(prefix)/include/mtmd.h:\n\(run.stderr)")
  }

  /// llama.cpp's own reference: llama-mtmd-cli reads a PNG through the tiny
  /// projector and answers greedily without error.
  func testReferenceCLIAnswersAboutAnImage() throws {
    guard let prefix = Self.prefix, FileManager.default.isExecutableFile(atPath: prefix + "/bin/llama-mtmd-cli") else {
      throw Prerequisite.missing("llama-mtmd-cli (scripts/setup-llama.sh builds it)")
    }
    let model = try LocalTestModels.require(LocalTestModels.tinyVisionPath)
    let projector = try LocalTestModels.require(LocalTestModels.tinyProjectorPath)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("projector-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let image = directory.appendingPathComponent("checks.png")
    try TestPNG.encode(width: 40, height: 30) { x, y in
      (x + y) % 2 == 0 ? (255, 40, 0) : (0, UInt8(y * 8), 200)
    }.write(to: image)
    let run = try ReferenceCLI.answer(
      prefix + "/bin/llama-mtmd-cli",
      [
        "-m", model, "--mmproj", projector, "--image", image.path, "-p", "What is in the picture?",
        "--temp", "0", "-n", "8", "-t", "2", "-c", "512", "--seed", "1",
      ])
    XCTAssertEqual(run.status, 0, "llama-mtmd-cli failed:\n\(run.stderr.suffix(3000))")
    // The pinned CLI logs its encoding of the image's chunk; older ones, "image decoded".
    XCTAssertTrue(
      run.stderr.contains("encoding mtmd batch") || run.stderr.contains("image decoded"),
      "no image was encoded:\n\(run.stderr.suffix(3000))")
    XCTAssertFalse(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "no answer")
  }

  /// The library loads the tiny projector for its model and reads its
  /// capabilities: images, no sound, libmtmd's default marker.
  func testProjectorLoadsForItsModelAndReadsImages() async throws {
    let library = try sharedLibrary()
    let model = try await loadTinyVisionModel()
    let projector = try Projector(
      path: try LocalTestModels.require(LocalTestModels.tinyProjectorPath), model: model, library: .success(library),
      threads: 2, warmup: false)
    XCTAssertTrue(projector.supportsVision)
    XCTAssertFalse(projector.supportsAudio)
    XCTAssertEqual(projector.marker, "<__media__>")
    XCTAssertEqual(library.defaultMarker, "<__media__>")
    XCTAssertFalse(projector.usesMRoPE)
    // Opened beside the libllama in use: the copy built with it.
    let llama = unsafeBitCast(llama_backend_init as @convention(c) () -> Void, to: UnsafeRawPointer.self)
    let llamaFile = try XCTUnwrap(CHybridOS_loaded_file(llama).map { String(cString: $0) })
    XCTAssertEqual(
      URL(fileURLWithPath: library.path).deletingLastPathComponent().path,
      URL(fileURLWithPath: llamaFile).deletingLastPathComponent().path)
  }

  /// Where there is no libmtmd (a llama.cpp without it), loading a projector
  /// throws `unsupportedRequest` saying so, which a hybrid falls back on.
  func testWithoutLibMTMDTheProjectorSaysWhy() async throws {
    let model = try await loadTinyVisionModel()
    let empty = FileManager.default.temporaryDirectory.appendingPathComponent("no-mtmd-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: empty) }
    let library = MTMDLibrary.open(directory: empty.path)
    XCTAssertThrowsError(
      try Projector(path: LocalTestModels.tinyProjectorPath, model: model, library: library, threads: 2)
    ) { error in
      guard case .unsupportedRequest(let why) = error as? HybridInferenceError else {
        return XCTFail("expected unsupportedRequest, got \(error)")
      }
      XCTAssertTrue(why.contains("libmtmd"), why)
      XCTAssertTrue(why.contains(empty.path), why)
    }
  }

  /// A file named libmtmd that is no shared library is refused with the
  /// loader's reason, not opened.
  func testAFileThatIsNotLibMTMDIsRefused() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bad-mtmd-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    for name in ["libmtmd.so.0", "libmtmd.so", "libmtmd.0.dylib", "libmtmd.dylib"] {
      try Data("not a library".utf8).write(to: directory.appendingPathComponent(name))
    }
    guard case .failure(.unsupportedRequest(let why)) = MTMDLibrary.open(directory: directory.path) else {
      return XCTFail("a text file named libmtmd was opened")
    }
    XCTAssertTrue(why.contains(directory.path), why)
  }

  private func loadTinyProjector() async throws -> Projector {
    let library = try sharedLibrary()
    return try Projector(
      path: try LocalTestModels.require(LocalTestModels.tinyProjectorPath), model: try await loadTinyVisionModel(),
      library: .success(library), threads: 2, warmup: false)
  }

  /// A grey image of `side` x `side` pixels.
  private func greyImage(side: Int) throws -> RGBImage {
    try XCTUnwrap(RGBImage(width: side, height: side, pixels: [UInt8](repeating: 128, count: side * side * 3)))
  }

  /// A prompt with a marker becomes an image chunk and a text chunk: the
  /// image's 4 embeddings (28x28 pixels in 14x14 patches), then the text's tokens.
  func testTokenizeSplitsTextAndImage() async throws {
    let projector = try await loadTinyProjector()
    let text = "What is this?"
    let chunks = try projector.tokenize(projector.marker + text, images: [try greyImage(side: 50)])
    let textTokens = try projector.model.tokenize(text, addSpecial: false, parseSpecial: true).count
    XCTAssertEqual(chunks.count, 2)
    XCTAssertEqual(chunks.tokenCount, 4 + textTokens)
    XCTAssertEqual(chunks.positionCount, chunks.tokenCount)
  }

  /// Markers and images that differ in number are refused, typed.
  func testMarkersAndImagesMustAgree() async throws {
    let projector = try await loadTinyProjector()
    XCTAssertThrowsError(try projector.tokenize(projector.marker + " and " + projector.marker, images: [])) { error in
      guard case .unsupportedRequest(let why) = error as? HybridInferenceError else {
        return XCTFail("expected unsupportedRequest, got \(error)")
      }
      XCTAssertTrue(why.contains("2 media markers for 0 images"), why)
    }
  }

  /// Evaluated into a llama.cpp context, the chunks (the image encoded on
  /// the way) take their positions, and the last token has logits to sample.
  func testEvaluatedChunksTakeTheirPositions() async throws {
    let projector = try await loadTinyProjector()
    let chunks = try projector.tokenize(
      "<|im_start|>user\n" + projector.marker + "Hi", images: [try greyImage(side: 28)])
    var params = llama_context_default_params()
    (params.n_ctx, params.n_batch, params.n_ubatch, params.n_seq_max, params.n_threads) = (256, 64, 64, 1, 2)
    let context = try XCTUnwrap(llama_init_from_model(projector.model.pointer, params))
    defer { llama_free(context) }
    let next = try projector.evaluate(chunks, into: context, sequence: 0, from: 0, batchSize: 64)
    XCTAssertEqual(Int(next), chunks.positionCount)
    XCTAssertNotNil(llama_get_logits_ith(context, -1))
  }

  /// Pixels that are not width x height x 3 bytes, or a side of 0 or past
  /// the limit, are no image.
  func testRGBImageChecksItsSize() {
    XCTAssertNil(RGBImage(width: 2, height: 2, pixels: [UInt8](repeating: 0, count: 11)))
    XCTAssertNil(RGBImage(width: 0, height: 2, pixels: []))
    XCTAssertNil(RGBImage(width: RGBImage.maximumSide + 1, height: 1, pixels: []))
    XCTAssertNotNil(RGBImage(width: 2, height: 2, pixels: [UInt8](repeating: 0, count: 12)))
  }

  /// A file libmtmd will not load as a projector (here a language model) is
  /// an invalid model file whose reason is libmtmd's own error line.
  func testAFileThatIsNoProjectorIsInvalidWithLibMTMDsReason() async throws {
    let library = try sharedLibrary()
    let model = try await loadTinyVisionModel()
    XCTAssertThrowsError(
      try Projector(path: LocalTestModels.tinyVisionPath, model: model, library: .success(library), threads: 2)
    ) { error in
      guard case .invalidModelFile(let path, let reason) = error as? HybridInferenceError else {
        return XCTFail("expected invalidModelFile, got \(error)")
      }
      XCTAssertEqual(path, LocalTestModels.tinyVisionPath)
      XCTAssertTrue(reason.contains("Failed to load"), reason)
    }
  }
}
