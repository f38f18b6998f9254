import Foundation
import HybridInference
import XCTest

/// Files that are not valid GGUF are refused by the library's own check,
/// before llama.cpp (which aborts the process on some of them) sees them.
final class ModelFileValidationTests: XCTestCase {
  private var directory: URL!

  override func setUpWithError() throws {
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("hybrid-gguf-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  override func tearDownWithError() throws {
    try? FileManager.default.removeItem(at: directory)
  }

  private func write(_ name: String, _ bytes: [UInt8]) throws -> String {
    let url = directory.appendingPathComponent(name)
    try Data(bytes).write(to: url)
    return url.path
  }

  private func tinyBytes() throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: LocalTestModels.require(LocalTestModels.tinyPath))))
  }

  /// Asserts the file is not ready and that loading it throws a typed error
  /// whose reason mentions `expected`.
  private func assertRefused(_ path: String, _ expected: String, line: UInt = #line) async {
    let model = LocalSystemModel(modelPath: path)
    XCTAssertEqual(model.availability, .unavailable(.modelNotReady), line: line)
    do {
      try await model.prepare()
      XCTFail("\(path) must be refused", line: line)
    } catch HybridInferenceError.invalidModelFile(let refusedPath, let reason) {
      XCTAssertEqual(refusedPath, path, line: line)
      XCTAssertTrue(reason.contains(expected), "reason was: \(reason)", line: line)
    } catch {
      XCTFail("unexpected error \(error)", line: line)
    }
  }

  func testMissingPath() async throws {
    await assertRefused(directory.appendingPathComponent("absent.gguf").path, "no such file")
  }

  func testDirectory() async throws {
    await assertRefused(directory.path, "directory")
  }

  /// At once: opening a pipe for reading would otherwise wait for a writer.
  func testNamedPipe_isRefusedWithoutWaiting() async throws {
    let path = directory.appendingPathComponent("pipe.gguf").path
    XCTAssertEqual(mkfifo(path, 0o600), 0)
    await assertRefused(path, "not a regular file")
  }

  func testEmptyFile() async throws {
    await assertRefused(try write("empty.gguf", []), "empty")
  }

  func testRandomBytes() async throws {
    var generator = SystemRandomNumberGenerator()
    let bytes = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
    await assertRefused(try write("random.gguf", bytes), "magic")
  }

  func testWrongVersion() async throws {
    var bytes = try tinyBytes()
    bytes[4] = 99
    await assertRefused(try write("version.gguf", bytes), "version 99")
  }

  func testTensorCountBeyondTheFile() async throws {
    var bytes = try tinyBytes()
    for index in 8..<16 { bytes[index] = 0x7F }
    await assertRefused(try write("counts.gguf", bytes), "beyond the end")
  }

  func testGGUFCutInHalf() async throws {
    let bytes = try tinyBytes()
    await assertRefused(try write("half.gguf", Array(bytes.prefix(bytes.count / 2))), "truncated")
  }

  func testTruncatedTensorData() async throws {
    let bytes = try tinyBytes()
    await assertRefused(try write("short.gguf", Array(bytes.dropLast(64))), "truncated")
  }

  func testHeaderCutShort() async throws {
    let bytes = try tinyBytes()
    await assertRefused(try write("header.gguf", Array(bytes.prefix(2000))), "end of the file")
  }

  func testPreferOnDevice_corruptFile_answeredByCloud() async throws {
    let path = try write("corrupt.gguf", Array("not a model".utf8))
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.answer(["from the cloud"])])
    let session = GenerativeModelSession(
      model: .hybridModel(primary: LocalSystemModel(modelPath: path), secondary: cloud),
      logHandler: .silent)
    let response = try await session.respond(to: "Hello")
    XCTAssertEqual(response.rawResponse.modelVersion, "cloud")
  }
}
