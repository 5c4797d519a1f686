#include <tuner/core/base/bucket_name.hpp>
#include <tuner/core/base/config.hpp>
#include <tuner/core/base/hash.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tune {
namespace {

TEST(ConfigTest, IdSortsKeysAndQuotesStrings) {
  Config c{{"STAGES", 3}, {"BM", 128}, {"LAYOUT", "row"}};
  EXPECT_EQ(c.id(), R"(BM=128,LAYOUT="row",STAGES=3)");
}

TEST(ConfigTest, IntAndStringOfTheSameDigitsDiffer) {
  EXPECT_NE(Config({{"A", 1}}).id(), Config({{"A", "1"}}).id());
  EXPECT_NE(Config({{"A", 1}}), Config({{"A", "1"}}));
}

TEST(ConfigTest, StringsWithSeparatorsCannotPoseAsTwoParams) {
  Config one{{"A", "1,B=2"}};
  Config two{{"A", "1"}, {"B", 2}};
  EXPECT_NE(one.id(), two.id());
  EXPECT_EQ(one.id(), R"(A="1,B=2")");
}

TEST(ConfigTest, NegativeIntsInDecimal) {
  EXPECT_EQ(Config({{"X", -7}}).id(), "X=-7");
}

TEST(ConfigTest, JsonRoundTrip) {
  Config c{{"BM", 64}, {"LAYOUT", "col"}};
  nlohmann::json j = c;
  EXPECT_EQ(j.dump(), R"({"BM":64,"LAYOUT":"col"})");
  EXPECT_EQ(j.get<Config>(), c);
  EXPECT_THROW(nlohmann::json::parse(R"({"A":1.5})").get<Config>(), nlohmann::json::exception);
}

TEST(ConfigTest, JsonIntegersBeyondInt64AreRefusedNotWrapped) {
  EXPECT_EQ(nlohmann::json::parse(R"({"A":9223372036854775807})").get<Config>().id(),
            "A=9223372036854775807");
  EXPECT_EQ(nlohmann::json::parse(R"({"A":-9223372036854775808})").get<Config>().id(),
            "A=-9223372036854775808");
  EXPECT_THROW(nlohmann::json::parse(R"({"A":9223372036854775808})").get<Config>(),
               nlohmann::json::out_of_range);
  EXPECT_THROW(nlohmann::json::parse(R"({"A":18446744073709551615})").get<Config>(),
               nlohmann::json::out_of_range);
}

TEST(ConfigTest, Accessors) {
  Config c{{"BM", 64}, {"LAYOUT", "col"}};
  EXPECT_EQ(c.int_param("BM"), 64);
  EXPECT_EQ(c.int_param("LAYOUT"), std::nullopt);
  EXPECT_EQ(c.string_param("LAYOUT"), "col");
  EXPECT_EQ(c.find("nope"), nullptr);
}

TEST(HashTest, KnownDigests) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex16(fnv1a64("")), "cbf29ce484222325");
  EXPECT_EQ(hex16(fnv1a64("a")), "af63dc4c8601ec8c");
}

TEST(BucketNameTest, EncodesUnsafeBytesReversibly) {
  for (std::string label : {"m<=512", "a b/c", "..", ".hidden", "plain-name_1.x", "", "100%"}) {
    std::string enc = encode_bucket(label);
    EXPECT_EQ(enc.find('/'), std::string::npos);
    EXPECT_NE(enc, "..");
    EXPECT_NE(enc.front(), '.');
    EXPECT_EQ(decode_bucket(enc), label) << enc;
  }
  EXPECT_EQ(encode_bucket("m<=512"), "m%3C%3D512");
  EXPECT_EQ(decode_bucket("%zz"), std::nullopt);
  EXPECT_EQ(decode_bucket("%4"), std::nullopt);
}

}  // namespace
}  // namespace tune
