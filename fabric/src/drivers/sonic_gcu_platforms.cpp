#include "sonic_gcu_platforms.hpp"

#include <algorithm>
#include <cctype>

namespace rocelab::fabric::drivers {

namespace {

struct listed_hwsku {
  const char* asic;
  const char* hwsku;
  bool exact;  // Mellanox: the whole name; Broadcom: contained in the HWSKU
};

// sonic-utilities generic_config_updater/gcu_field_operation_validators.conf.json,
// helper_data.rdma_config_update_validator (mellanox_asics, broadcom_asics).
constexpr listed_hwsku listed[] = {
    {"spc1", "ACS-MSN2700", true},
    {"spc1", "ACS-MSN2740", true},
    {"spc1", "ACS-MSN2100", true},
    {"spc1", "ACS-MSN2410", true},
    {"spc1", "ACS-MSN2010", true},
    {"spc1", "Mellanox-SN2700", true},
    {"spc1", "Mellanox-SN2700-C28D8", true},
    {"spc1", "Mellanox-SN2700-D40C8S8", true},
    {"spc1", "Mellanox-SN2700-D44C10", true},
    {"spc1", "Mellanox-SN2700-D48C8", true},
    {"spc1", "ACS-MSN2700-A1", true},
    {"spc1", "Mellanox-SN2700-A1", true},
    {"spc1", "Mellanox-SN2700-A1-C28D8", true},
    {"spc1", "Mellanox-SN2700-A1-D40C8S8", true},
    {"spc1", "Mellanox-SN2700-A1-D44C10", true},
    {"spc1", "Mellanox-SN2700-A1-D48C8", true},
    {"spc2", "ACS-MSN3800", true},
    {"spc2", "Mellanox-SN3800-D112C8", true},
    {"spc2", "ACS-MSN3420", true},
    {"spc2", "ACS-MSN3700C", true},
    {"spc2", "ACS-MSN3700", true},
    {"spc2", "Mellanox-SN3800-C64", true},
    {"spc2", "Mellanox-SN3800-D100C12S2", true},
    {"spc2", "Mellanox-SN3800-D24C52", true},
    {"spc2", "Mellanox-SN3800-D28C49S1", true},
    {"spc2", "Mellanox-SN3800-D28C50", true},
    {"spc3", "ACS-MSN4700", true},
    {"spc3", "ACS-MSN4600", true},
    {"spc3", "ACS-MSN4600C", true},
    {"spc3", "ACS-MSN4410", true},
    {"spc3", "ACS-SN4280", true},
    {"spc3", "Mellanox-SN4600C-D112C8", true},
    {"spc3", "Mellanox-SN4600C-C64", true},
    {"spc3", "Mellanox-SN4700-O8C48", true},
    {"spc3", "Mellanox-SN4600C-D100C12S2", true},
    {"spc3", "Mellanox-SN4600C-D48C40", true},
    {"spc3", "Mellanox-SN4700-O32", true},
    {"spc3", "Mellanox-SN4700-V64", true},
    {"spc3", "Mellanox-SN4700-A96C8V8", true},
    {"spc3", "Mellanox-SN4700-C128", true},
    {"spc3", "Mellanox-SN4700-O28", true},
    {"spc3", "Mellanox-SN4700-O8V48", true},
    {"spc3", "Mellanox-SN4700-V48C32", true},
    {"spc3", "Mellanox-SN4280-O28", true},
    {"spc3", "Mellanox-SN4280-O8C80", true},
    {"spc3", "Mellanox-SN4280-C48", true},
    {"spc3", "Mellanox-SN4280-O8C40", true},
    {"spc3", "Mellanox-SN4280-O8V40", true},
    {"spc3", "Mellanox-SN4280-O4X96", true},
    {"spc4", "ACS-SN5600", true},
    {"spc4", "Mellanox-SN5600-O128", true},
    {"spc4", "Mellanox-SN5600-V256", true},
    {"spc4", "Mellanox-SN5600-C256S1", true},
    {"spc4", "ACS-SN5400", true},
    {"spc4", "Mellanox-SN5600-C224O8", true},
    {"spc4", "Mellanox-SN5610N-C256S2", true},
    {"spc4", "Mellanox-SN5610N-C224O8", true},
    {"spc5", "ACS-SN5640", true},
    {"spc5", "Mellanox-SN5640-C512S2", true},
    {"spc5", "Mellanox-SN5640-C448O16", true},
    {"spc5", "Mellanox-SN5640-C512X2", true},
    {"spc5", "Mellanox-SN5640-C508O1X2", true},
    {"spc5", "Mellanox-SN5640-O128X2", true},
    {"spc6", "ACS-SN6600_LD", true},
    {"spc6", "Mellanox-SN6600_LD-P128C2", true},
    {"spc6", "Mellanox-SN6600_LD-P64O128C2", true},
    {"spc6", "ACS-SN6810_LD", true},
    {"th", "Force10-S6100", false},
    {"th", "Arista-7060CX-32S-C32", false},
    {"th", "Arista-7060CX-32S-C32-T1", false},
    {"th", "Arista-7060CX-32S-D48C8", false},
    {"th", "Celestica-DX010-C32", false},
    {"th", "Seastone-DX010", false},
    {"th2", "Arista-7260CX3-D108C10", false},
    {"th2", "Arista-7260CX3-D108C8", false},
    {"th2", "Arista-7260CX3-C64", false},
    {"th2", "Arista-7260CX3-Q44", false},
    {"th2", "Arista-7260CX3-Q64", false},
    {"th3", "Nokia-IXR7220-H3", false},
    {"th4", "Nokia-IXR7220-H4-64D", false},
    {"th4", "Nokia-IXR7220-H4-32D", false},
    {"th5", "Nokia-IXR7220-H5-64D", false},
    {"th5", "Arista-7060X6-64DE", false},
    {"th5", "Arista-7060X6-64PE", false},
    {"th5", "Arista-7060X6-64PE-C224O8", false},
    {"th5", "Arista-7060X6-64PE-C256S2", false},
    {"th5", "Nokia-IXR7220-H5-64O", false},
    {"th5", "Nokia-IXR7220-H5-32D", false},
    {"th5", "Arista-7060X6-64PE-B-C512S2", false},
    {"th5", "Arista-7060X6-64PE-B-C448O16", false},
    {"th5", "Arista-7060X6-64PE-B-O128", false},
    {"th5", "Arista-7060X6-64PE-B-O128S2", false},
    {"th5", "Arista-7060X6-16PE-384C-B-O128S2", false},
    {"th5", "Arista-7060X6-64PE-B-P32O64", false},
    {"th5", "Arista-7060X6-64PE-B-P64", false},
    {"th5", "Arista-7060X6-64PE-B-P32V128", false},
    {"th5", "Arista-7060X6-64PE-O128", false},
    {"th5", "Arista-7060X6-64PE-O128S2", false},
    {"th5", "Arista-7060X6-64PE-P32O64", false},
    {"th5", "Arista-7060X6-64PE-P64", false},
    {"th5", "Arista-7060X6-64PE-P32V128", false},
    {"th6", "Nokia-IXR7220-H6-64", false},
    {"th6", "Nokia-IXR7220-H6-P128", false},
    {"th6", "Nokia-IXR7220-H6-O256", false},
    {"td2", "Force10-S6000", false},
    {"td2", "Force10-S6000-Q24S32", false},
    {"td2", "Arista-7050-QX32", false},
    {"td2", "Arista-7050-QX-32S", false},
    {"td2", "Nexus-3164", false},
    {"td2", "Arista-7050QX32S-Q32", false},
    {"td3", "Arista-7050CX3-32C-C32", false},
    {"td3", "Arista-7050CX3-32S-C32", false},
    {"td3", "Arista-7050CX3-32S-D48C8", false},
    {"td3", "Arista-7050CX3-32S-C28S4", false},
    {"td3", "Arista-7050CX3-32C-C28S4", false},
    {"td4", "Nokia-IXR7220-D4-36D", false},
    {"j2c+", "Nokia-IXR7250E-36x100G", false},
    {"j2c+", "Nokia-IXR7250E-36x400G", false},
    {"j2c+", "Nokia-IXR7250-X3B", false},
    {"j2c+", "Arista-7800R3A-36DM2-D36", false},
    {"q2c+", "Nokia-IXR7250-X1B", false},
    {"jr2", "Arista-7800R3-48CQ2-C48", false},
    {"jr2", "Arista-7800R3-48CQM2-C48", false},
    {"jr2", "Arista-7808R3A-FM", false},
    {"q3d", "Arista-7280R4-32QF-32DF-64O", false},
    {"q3d", "Arista-7280R4K-32QF-32DF-64O", false},
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::optional<std::string> gcu_rdma_asic(const std::string& hwsku) {
  const std::string h = lower(hwsku);
  for (const auto& l : listed)
    if (l.exact && h == lower(l.hwsku)) return std::string(l.asic);
  for (const auto& l : listed)
    if (!l.exact && h.find(lower(l.hwsku)) != std::string::npos) return std::string(l.asic);
  return std::nullopt;
}

}  // namespace rocelab::fabric::drivers
