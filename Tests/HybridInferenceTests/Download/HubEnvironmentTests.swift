import Foundation
import XCTest

@testable import HybridInferenceDownload

/// The hub's environment read as huggingface_hub reads it: where the cache
/// is, which hub to ask, which token to send, where `.url` files go.
final class HubEnvironmentTests: XCTestCase {
  func testTheCacheFollowsHFHubCacheThenHFHomeThenXDGThenHome() {
    XCTAssertEqual(HubEnvironment(["HOME": "/h"]).hubCache.path, "/h/.cache/huggingface/hub")
    XCTAssertEqual(HubEnvironment(["HOME": "/h", "XDG_CACHE_HOME": "/x"]).hubCache.path, "/x/huggingface/hub")
    XCTAssertEqual(HubEnvironment(["HOME": "/h", "HF_HOME": "/hf"]).hubCache.path, "/hf/hub")
    XCTAssertEqual(HubEnvironment(["HF_HOME": "/hf", "HF_HUB_CACHE": "/c"]).hubCache.path, "/c")
    XCTAssertEqual(HubEnvironment(["HOME": "/h", "HF_HUB_CACHE": ""]).hubCache.path, "/h/.cache/huggingface/hub")
  }

  func testTheEndpointIsHFEndpointWithoutItsTrailingSlash() {
    XCTAssertEqual(HubEnvironment([:]).endpoint.absoluteString, "https://huggingface.co")
    XCTAssertEqual(HubEnvironment(["HF_ENDPOINT": "http://127.0.0.1:9/"]).endpoint.absoluteString, "http://127.0.0.1:9")
  }

  func testTheTokenIsHFTokenElseTheTokenFilesFirstLine() throws {
    let home = FileManager.default.temporaryDirectory.appendingPathComponent("hf-home-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: home) }
    XCTAssertNil(HubEnvironment(["HF_HOME": home.path]).token())
    try Data("hf_fromfile \n second line\n".utf8).write(to: home.appendingPathComponent("token"))
    XCTAssertEqual(HubEnvironment(["HF_HOME": home.path]).token(), "hf_fromfile")
    XCTAssertEqual(HubEnvironment(["HF_HOME": home.path, "HF_TOKEN": " hf_variable\n"]).token(), "hf_variable")
    let elsewhere = home.appendingPathComponent("elsewhere")
    try Data("hf_elsewhere".utf8).write(to: elsewhere)
    XCTAssertEqual(HubEnvironment(["HF_HOME": home.path, "HF_TOKEN_PATH": elsewhere.path]).token(), "hf_elsewhere")
  }

  func testATokenFileThatIsALinkAPipeOrHugeIsNotRead() throws {
    let home = FileManager.default.temporaryDirectory.appendingPathComponent("hf-home-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: home) }
    let real = home.appendingPathComponent("real")
    try Data("hf_secret".utf8).write(to: real)
    try FileManager.default.createSymbolicLink(
      atPath: home.appendingPathComponent("token").path, withDestinationPath: real.path)
    XCTAssertNil(HubEnvironment(["HF_HOME": home.path]).token())
    let pipe = home.appendingPathComponent("pipe")
    XCTAssertEqual(mkfifo(pipe.path, 0o600), 0)
    XCTAssertNil(HubEnvironment(["HF_TOKEN_PATH": pipe.path]).token(), "a pipe blocked or was read")
    let huge = home.appendingPathComponent("huge")
    try Data(repeating: 0x61, count: HubEnvironment.maximumTokenFileBytes + 1).write(to: huge)
    XCTAssertNil(HubEnvironment(["HF_TOKEN_PATH": huge.path]).token())
  }

  func testURLDownloadsGoToTheModelsDirectory() {
    XCTAssertEqual(HubEnvironment(["HOME": "/h"]).modelsDirectory.path, "/h/.cache/hybrid-inference/models")
    XCTAssertEqual(HubEnvironment(["XDG_CACHE_HOME": "/x"]).modelsDirectory.path, "/x/hybrid-inference/models")
    XCTAssertEqual(HubEnvironment(["HYBRID_INFERENCE_MODELS": "/m"]).modelsDirectory.path, "/m")
  }

  func testContentRangeReadsOnlyWellFormedRanges() {
    XCTAssertEqual(ContentRange("bytes 10-99/100").map { [$0.first, $0.last, $0.total] }, [10, 99, 100])
    for bad in ["bytes 10-9/100", "bytes 0-100/100", "bytes */100", "bytes -1-5/10", "items 0-1/2", "bytes 0-1/x", ""] {
      XCTAssertNil(ContentRange(bad), bad)
    }
  }
}
