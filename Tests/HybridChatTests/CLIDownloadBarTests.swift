import HybridInferenceDownload
import XCTest

@testable import HybridChatCore

/// The download's progress line, its sizes, its rate and its time left:
/// pure rendering from given readings and times.
final class CLIDownloadBarTests: XCTestCase {
  private let clear = "\r\u{1B}[2K"

  func testByteCounts() {
    XCTAssertEqual(ByteCount.text(0), "0 B")
    XCTAssertEqual(ByteCount.text(999), "999 B")
    XCTAssertEqual(ByteCount.text(1000), "1.0 kB")
    XCTAssertEqual(ByteCount.text(647_118), "647.1 kB")
    XCTAssertEqual(ByteCount.text(98_000_000), "98.0 MB")
    XCTAssertEqual(ByteCount.text(4_368_000_000), "4.4 GB")
    XCTAssertEqual(ByteCount.text(.max), "9223.4 PB", "the largest unit bounds the loop")
    XCTAssertEqual(ByteCount.text(-1), "0 B")
    XCTAssertEqual(ByteCount.text(44_100_000, of: 98_000_000), "44.1/98.0 MB")
    XCTAssertEqual(ByteCount.text(500, of: 647_118), "0.5/647.1 kB")
    XCTAssertEqual(ByteCount.rate(12_300_000), "12.3 MB/s")
    XCTAssertEqual(ByteCount.rate(0), "0 B/s")
    XCTAssertEqual(ByteCount.rate(-5), "0 B/s")
    XCTAssertEqual(ByteCount.rate(.nan), "0 B/s")
  }

  func testRateAndTimeLeft_fromGivenTimes() {
    var rate = TransferRate()
    XCTAssertNil(rate.bytesPerSecond, "no reading")
    rate.record(0, at: .zero)
    XCTAssertNil(rate.bytesPerSecond, "one reading spans no time")
    rate.record(1_000_000, at: .seconds(1))
    XCTAssertEqual(rate.bytesPerSecond, 1_000_000)
    XCTAssertEqual(rate.secondsLeft(total: 5_000_000), 4)
    XCTAssertNil(rate.secondsLeft(total: nil), "no size, no time left")
    rate.record(500_000, at: .milliseconds(500))
    XCTAssertEqual(rate.bytesPerSecond, 1_000_000, "a reading from the past is ignored")
  }

  func testRate_countsOnlyTheBytesMovedAfterAResume() {
    var rate = TransferRate()
    rate.record(400_000_000, at: .zero)  // found on disk
    rate.record(402_000_000, at: .seconds(2))
    XCTAssertEqual(rate.bytesPerSecond, 1_000_000)
  }

  func testRate_followsTheLastWindow() {
    var rate = TransferRate()
    // 10 s at 1 MB/s, then 5 s at 3 MB/s: the window sees only the fast part.
    for second in 0...10 { rate.record(Int64(second) * 1_000_000, at: .seconds(second)) }
    for second in 11...15 { rate.record(10_000_000 + Int64(second - 10) * 3_000_000, at: .seconds(second)) }
    XCTAssertEqual(rate.bytesPerSecond, 3_000_000)
  }

  func testRate_keepsABoundedNumberOfReadings() {
    var rate = TransferRate()
    for step in 0..<10_000 { rate.record(Int64(step) * 100, at: .microseconds(step * 10)) }
    XCTAssertLessThanOrEqual(rate.readings.count, TransferRate.maximumReadings)
    XCTAssertEqual(try XCTUnwrap(rate.bytesPerSecond), 10_000_000, accuracy: 1)
  }

  func testStalledRate_showsNoTimeLeft() {
    var rate = TransferRate()
    rate.record(300, at: .zero)
    rate.record(300, at: .seconds(6))
    XCTAssertEqual(rate.bytesPerSecond, 0)
    XCTAssertNil(rate.secondsLeft(total: 1000))
  }

  func testLine_withSizeRateAndTimeLeft() {
    let bar = DownloadBar(fileName: "smollm2.gguf", width: 10)
    XCTAssertEqual(
      bar.line(DownloadProgress(completedBytes: 44_100_000, totalBytes: 98_000_000), bytesPerSecond: 12_300_000),
      "\(clear)Downloading smollm2.gguf [===>      ]  45%  44.1/98.0 MB  12.3 MB/s  5 s left")
  }

  func testLine_unknownTotal_hasNoBarNorTimeLeft() {
    let bar = DownloadBar(fileName: "m.gguf", width: 10)
    XCTAssertEqual(
      bar.line(DownloadProgress(completedBytes: 1_500_000, totalBytes: nil), bytesPerSecond: 2_000_000),
      "\(clear)Downloading m.gguf  1.5 MB  2.0 MB/s")
  }

  func testLine_zeroOrUnknownRate_hasNoTimeLeft() {
    let bar = DownloadBar(fileName: "m.gguf", width: 10)
    let progress = DownloadProgress(completedBytes: 0, totalBytes: 647_118)
    XCTAssertEqual(
      bar.line(progress, bytesPerSecond: 0), "\(clear)Downloading m.gguf [          ]   0%  0.0/647.1 kB  0 B/s")
    XCTAssertEqual(
      bar.line(progress, bytesPerSecond: nil), "\(clear)Downloading m.gguf [          ]   0%  0.0/647.1 kB")
    XCTAssertEqual(bar.erase, clear)
  }

  func testTimeLeft() {
    XCTAssertEqual(DownloadBar.timeText(0), "0 s")
    XCTAssertEqual(DownloadBar.timeText(4.2), "5 s")
    XCTAssertEqual(DownloadBar.timeText(59.5), "1 min")
    XCTAssertEqual(DownloadBar.timeText(125), "2 min 5 s")
    XCTAssertEqual(DownloadBar.timeText(3600), "1 h")
    XCTAssertEqual(DownloadBar.timeText(3 * 3600 + 12 * 60 + 5), "3 h 12 min")
    XCTAssertEqual(DownloadBar.timeText(.infinity), "a long time")
    XCTAssertEqual(DownloadBar.timeText(-3), "0 s")
  }

  func testSummary() {
    XCTAssertEqual(
      DownloadBar.summary(fileName: "m.gguf", size: 647_118, moved: 647_118, elapsed: .milliseconds(500)),
      "downloaded m.gguf: 647.1 kB in 0.5 s (1.3 MB/s)")
    XCTAssertEqual(
      DownloadBar.summary(fileName: "m.gguf", size: 647_118, moved: 253_920, elapsed: .milliseconds(200)),
      "downloaded m.gguf: 647.1 kB (253.9 kB of it now) in 0.2 s (1.3 MB/s)")
    XCTAssertEqual(
      DownloadBar.summary(fileName: "m.gguf", size: 98_000_000, moved: 98_000_000, elapsed: .seconds(125)),
      "downloaded m.gguf: 98.0 MB in 2 min 5 s (784.0 kB/s)")
  }
}
