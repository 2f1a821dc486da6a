#include "sonic_gcu_platforms.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace rocelab::fabric::drivers {

namespace {

constexpr std::array<std::string_view, 4> known_releases = {"202305", "202311", "202405", "202411"};

struct listed_hwsku {
  const char* asic;
  const char* hwsku;
  bool mellanox;  // Mellanox: the whole name; Broadcom: contained in the HWSKU
  int since;      // the first release whose helper_data lists it
};

// helper_data.rdma_config_update_validator (mellanox_asics, broadcom_asics) of the
// releases, each entry with the first release listing it; no entry was ever removed, and
// the Broadcom families keep one order (202405 inserted th3..th5 after th2).
constexpr listed_hwsku listed[] = {
    {"spc1", "ACS-MSN2700", true, 202305},
    {"spc1", "ACS-MSN2740", true, 202305},
    {"spc1", "ACS-MSN2100", true, 202305},
    {"spc1", "ACS-MSN2410", true, 202305},
    {"spc1", "ACS-MSN2010", true, 202305},
    {"spc1", "Mellanox-SN2700", true, 202305},
    {"spc1", "Mellanox-SN2700-C28D8", true, 202305},
    {"spc1", "Mellanox-SN2700-D40C8S8", true, 202305},
    {"spc1", "Mellanox-SN2700-D44C10", true, 202305},
    {"spc1", "Mellanox-SN2700-D48C8", true, 202305},
    {"spc1", "ACS-MSN2700-A1", true, 202305},
    {"spc1", "Mellanox-SN2700-A1", true, 202305},
    {"spc1", "Mellanox-SN2700-A1-C28D8", true, 202305},
    {"spc1", "Mellanox-SN2700-A1-D40C8S8", true, 202305},
    {"spc1", "Mellanox-SN2700-A1-D44C10", true, 202305},
    {"spc1", "Mellanox-SN2700-A1-D48C8", true, 202305},
    {"spc2", "ACS-MSN3800", true, 202305},
    {"spc2", "Mellanox-SN3800-D112C8", true, 202305},
    {"spc2", "ACS-MSN3420", true, 202305},
    {"spc2", "ACS-MSN3700C", true, 202305},
    {"spc2", "ACS-MSN3700", true, 202305},
    {"spc2", "Mellanox-SN3800-C64", true, 202305},
    {"spc2", "Mellanox-SN3800-D100C12S2", true, 202305},
    {"spc2", "Mellanox-SN3800-D24C52", true, 202305},
    {"spc2", "Mellanox-SN3800-D28C49S1", true, 202305},
    {"spc2", "Mellanox-SN3800-D28C50", true, 202305},
    {"spc3", "ACS-MSN4700", true, 202305},
    {"spc3", "ACS-MSN4600", true, 202305},
    {"spc3", "ACS-MSN4600C", true, 202305},
    {"spc3", "ACS-MSN4410", true, 202305},
    {"spc3", "Mellanox-SN4600C-D112C8", true, 202305},
    {"spc3", "Mellanox-SN4600C-C64", true, 202305},
    {"spc3", "Mellanox-SN4700-O8C48", true, 202305},
    {"spc3", "Mellanox-SN4600C-D100C12S2", true, 202305},
    {"spc3", "Mellanox-SN4600C-D48C40", true, 202305},
    {"spc3", "Mellanox-SN4700-A96C8V8", true, 202305},
    {"spc3", "Mellanox-SN4700-C128", true, 202305},
    {"spc3", "Mellanox-SN4700-O28", true, 202305},
    {"spc3", "Mellanox-SN4700-O8V48", true, 202305},
    {"spc3", "Mellanox-SN4700-V48C32", true, 202305},
    {"spc3", "Mellanox-SN4700-O32", true, 202311},
    {"spc3", "Mellanox-SN4700-V64", true, 202311},
    {"spc3", "ACS-SN4280", true, 202405},
    {"spc3", "Mellanox-SN4280-O28", true, 202405},
    {"spc3", "Mellanox-SN4280-C48", true, 202411},
    {"spc3", "Mellanox-SN4280-O8C40", true, 202411},
    {"spc3", "Mellanox-SN4280-O8V40", true, 202411},
    {"spc4", "ACS-SN5600", true, 202305},
    {"spc4", "Mellanox-SN5600-O128", true, 202311},
    {"spc4", "Mellanox-SN5600-V256", true, 202311},
    {"spc4", "ACS-SN5400", true, 202311},
    {"spc4", "Mellanox-SN5600-C256S1", true, 202405},
    {"spc4", "Mellanox-SN5600-C224O8", true, 202405},
    {"spc4", "Mellanox-SN5610N-C256S2", true, 202411},
    {"spc4", "Mellanox-SN5610N-C224O8", true, 202411},
    {"spc5", "ACS-SN5640", true, 202411},
    {"th", "Force10-S6100", false, 202305},
    {"th", "Arista-7060CX-32S-C32", false, 202305},
    {"th", "Arista-7060CX-32S-C32-T1", false, 202305},
    {"th", "Arista-7060CX-32S-D48C8", false, 202305},
    {"th", "Celestica-DX010-C32", false, 202305},
    {"th", "Seastone-DX010", false, 202305},
    {"th2", "Arista-7260CX3-D108C8", false, 202305},
    {"th2", "Arista-7260CX3-C64", false, 202305},
    {"th2", "Arista-7260CX3-Q64", false, 202305},
    {"th2", "Arista-7260CX3-D108C10", false, 202405},
    {"th3", "Nokia-IXR7220-H3", false, 202405},
    {"th4", "Nokia-IXR7220-H4-64D", false, 202405},
    {"th4", "Nokia-IXR7220-H4-32D", false, 202405},
    {"th5", "Nokia-IXR7220-H5-64D", false, 202405},
    {"th5", "Arista-7060X6-64DE", false, 202411},
    {"th5", "Arista-7060X6-64PE", false, 202411},
    {"td2", "Force10-S6000", false, 202305},
    {"td2", "Force10-S6000-Q24S32", false, 202305},
    {"td2", "Arista-7050-QX32", false, 202305},
    {"td2", "Arista-7050-QX-32S", false, 202305},
    {"td2", "Nexus-3164", false, 202305},
    {"td2", "Arista-7050QX32S-Q32", false, 202305},
    {"td3", "Arista-7050CX3-32S-C32", false, 202305},
    {"td3", "Arista-7050CX3-32S-D48C8", false, 202305},
    {"td3", "Arista-7050CX3-32S-C28S4", false, 202405},
    {"j2c+", "Nokia-IXR7250E-36x100G", false, 202405},
    {"j2c+", "Nokia-IXR7250E-36x400G", false, 202405},
};

// rdma_config_update_validator scenarios of the tables the driver writes: the minimum
// 8-digit branch version per ASIC ("": refused). The same on 202305..202411, where the
// ASICs detectable on a release are all named.
struct field_rule {
  const char* table;
  const char* field;
  std::array<std::pair<const char*, const char*>, 12> platforms;
};
constexpr std::array<std::pair<const char*, const char*>, 12> ecn_and_dynamic_th = {{
    {"spc1", "20181100"}, {"spc2", "20191100"}, {"spc3", "20220500"}, {"spc4", "20221100"},
    {"td2", "20181100"},  {"th", "20181100"},   {"th2", "20181100"},  {"th3", "20240500"},
    {"th4", "20240500"},  {"th5", "20240500"},  {"td3", "20201200"},  {"cisco-8000", "20201200"},
}};
constexpr std::array<std::pair<const char*, const char*>, 12> xoff = {{
    {"spc1", "20191100"}, {"spc2", "20191100"}, {"spc3", "20220500"}, {"spc4", "20221100"},
    {"td2", ""},          {"th", "20221100"},   {"th2", "20221100"},  {"th3", "20240500"},
    {"th4", "20240500"},  {"th5", "20240500"},  {"td3", "20221100"},  {"cisco-8000", "20201200"},
}};
// j2c+ (202405 on) takes 20220500 in every scenario.
constexpr const char* j2c_plus_version = "20220500";
constexpr field_rule rules[] = {
    {"WRED_PROFILE", "azure_lossless/green_min_threshold", ecn_and_dynamic_th},
    {"WRED_PROFILE", "azure_lossless/green_max_threshold", ecn_and_dynamic_th},
    {"WRED_PROFILE", "azure_lossless/green_drop_probability", ecn_and_dynamic_th},
    {"BUFFER_PROFILE", "dynamic_th", ecn_and_dynamic_th},
    {"BUFFER_PROFILE", "xoff", xoff},
};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

int release_index(std::string_view release) {
  for (std::size_t i = 0; i < known_releases.size(); ++i)
    if (known_releases[i] == release) return static_cast<int>(i);
  return -1;
}

int since_index(int since) {
  for (std::size_t i = 0; i < known_releases.size(); ++i)
    if (std::to_string(since) == known_releases[i]) return static_cast<int>(i);
  return static_cast<int>(known_releases.size());
}

}  // namespace

bool gcu_release_known(std::string_view release) { return release_index(release) >= 0; }

std::optional<std::string> gcu_rdma_asic(std::string_view release, std::string_view asic_type, const std::string& hwsku) {
  const int r = release_index(release);
  if (r < 0) return std::nullopt;
  if (asic_type == "cisco-8000") return std::string("cisco-8000");
  const bool mellanox = asic_type == "mellanox" || asic_type == "vs";
  const bool broadcom = asic_type == "broadcom" || asic_type == "vs";
  const std::string h = lower(hwsku);
  if (mellanox)
    for (const auto& l : listed) {
      const std::string_view asic = l.asic;
      const bool looked_at = asic == "spc1" || asic == "spc2" || asic == "spc3" || asic == "spc4";
      if (l.mellanox && looked_at && since_index(l.since) <= r && h == lower(l.hwsku)) return std::string(l.asic);
    }
  if (broadcom)
    for (const auto& l : listed)
      if (!l.mellanox && since_index(l.since) <= r && h.find(lower(l.hwsku)) != std::string::npos)
        return std::string(l.asic);
  return std::nullopt;
}

std::string gcu_field_refusal(std::string_view table, std::string_view field, const std::string& asic,
                              std::string_view branch_version) {
  const field_rule* rule = nullptr;
  for (const auto& r : rules)
    if (table == r.table && field == r.field) rule = &r;
  if (rule == nullptr) return "no scenario of " + std::string(table) + " names field " + std::string(field);
  const char* min = nullptr;
  for (const auto& [a, v] : rule->platforms)
    if (asic == a) min = v;
  if (asic == "j2c+") min = j2c_plus_version;
  if (min == nullptr)
    return "the scenario of " + std::string(table) + " " + std::string(field) + " has no platform entry for " + asic +
           " (the updater fails looking it up)";
  if (std::string_view(min).empty())
    return "its platform entry for " + asic + " is \"\": the updater never lets " + asic + " change " +
           std::string(table) + " " + std::string(field);
  if (!branch_version.empty() && branch_version < std::string_view(min))
    return asic + " may change " + std::string(table) + " " + std::string(field) + " from build " + min + " on; this switch runs " +
           std::string(branch_version);
  return {};
}

}  // namespace rocelab::fabric::drivers
