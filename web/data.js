// Seed data for the orders back office: 48 sales orders, SO-1001 to SO-1048.
// The list is fixed (no randomness) so tests and screenshots are repeatable.

const rows = [
  // [customer, amount, status, note, placed]
  ["Alder & Finch Interiors", 1840.0, "open", "Deliver to loading bay B", "2026-03-02"],
  ["Brightwater Dental Group", 612.5, "open", "", "2026-03-02"],
  ["Cobalt Ridge Outfitters", 9420.0, "open", "Credit check pending with finance", "2026-03-03"],
  ["Dunmore Public Library", 276.4, "approved", "Invoice to accounts payable", "2026-03-03"],
  ["Everly Bakehouse", 1395.0, "open", "Second order this month", "2026-03-04"],
  ["Fenwick Logistics", 23750.0, "shipped", "Split across two trucks", "2026-03-04"],
  ["Greyhollow Veterinary", 488.9, "open", "", "2026-03-05"],
  ["Harbor Street Cafe", 154.2, "cancelled", "Customer ordered twice by mistake", "2026-03-05"],
  ["Ironbridge Machining", 7310.0, "approved", "Net 30 terms agreed", "2026-03-06"],
  ["Juniper Lane Florists", 342.0, "open", "Fragile: glass vases", "2026-03-06"],
  ["Kestrel Aviation Services", 15880.0, "open", "Needs hazmat paperwork", "2026-03-07"],
  ["Lakeside Montessori", 930.75, "shipped", "", "2026-03-07"],
  ["Marlow & Sons Hardware", 2210.0, "open", "Call before delivery", "2026-03-08"],
  ["Northgate Clinic", 4105.3, "approved", "", "2026-03-08"],
  ["Oakridge Property Mgmt", 1780.0, "open", "Quote QT-2231 applies", "2026-03-09"],
  ["Pinecrest Brewing Co.", 5620.0, "shipped", "Pallet jack required on site", "2026-03-09"],
  ["Quayside Marine Supply", 3348.6, "open", "", "2026-03-10"],
  ["Redfern Architects", 720.0, "open", "Samples only, no invoice", "2026-03-10"],
  ["Silverline Fitness", 11240.0, "approved", "Install team booked for the 24th", "2026-03-11"],
  ["Thistle & Thorn Tea Rooms", 265.8, "open", "", "2026-03-11"],
  ["Upland Grain Cooperative", 18900.0, "shipped", "Bulk discount 4% applied", "2026-03-12"],
  ["Vantage Point Surveying", 1510.0, "open", "Rush: needed by Friday", "2026-03-12"],
  ["Willowbrook Primary School", 842.15, "open", "PO number to follow", "2026-03-13"],
  ["Yardley Print Works", 2675.0, "cancelled", "Replaced by SO-1031", "2026-03-13"],
  ["Zephyr Wind Energy", 41200.0, "open", "Board sign-off above 25k", "2026-03-14"],
  ["Ashgrove Family Practice", 389.0, "shipped", "", "2026-03-14"],
  ["Beacon Hill Realty", 1120.0, "open", "Deliver after 10:00", "2026-03-15"],
  ["Cedar Point Camping", 6480.0, "approved", "Seasonal stock", "2026-03-15"],
  ["Driftwood Gallery", 995.0, "open", "Gift wrap requested", "2026-03-16"],
  ["Emberly Catering", 2380.4, "open", "", "2026-03-16"],
  ["Foxglove Pharmacy", 1765.0, "shipped", "Temperature-controlled van", "2026-03-17"],
  ["Granite Peak Builders", 13960.0, "open", "Site contact: R. Osei", "2026-03-17"],
  ["Hawthorne Legal LLP", 540.0, "approved", "", "2026-03-18"],
  ["Islington Bike Works", 2890.0, "open", "Back-order two frames", "2026-03-18"],
  ["Jasper Creek Winery", 7725.0, "shipped", "Signature on delivery", "2026-03-19"],
  ["Kingfisher Swim School", 415.6, "open", "", "2026-03-19"],
  ["Linden Tree Nursery", 1990.0, "cancelled", "Budget freeze until April", "2026-03-20"],
  ["Meridian Data Centre", 38450.0, "open", "Security escort at gate 3", "2026-03-20"],
  ["Nettlebed Farm Shop", 287.3, "open", "", "2026-03-21"],
  ["Orchard View Care Home", 3120.0, "approved", "Monthly standing order", "2026-03-21"],
  ["Palisade Security", 5275.0, "open", "Confirm serial numbers", "2026-03-22"],
  ["Quillon Fencing Club", 655.0, "shipped", "", "2026-03-22"],
  ["Rosemary Lane Bistro", 1210.9, "open", "Kitchen closed Mondays", "2026-03-23"],
  ["Starling Media", 4460.0, "open", "Invoice in two parts", "2026-03-23"],
  ["Tidewater Kayaks", 2035.0, "approved", "", "2026-03-24"],
  ["Umber Ceramics Studio", 768.25, "open", "Customer collects", "2026-03-24"],
  ["Vesper Hotel Group", 19340.0, "open", "Frame agreement FA-09", "2026-03-25"],
  ["Wrenfield Parish Council", 455.0, "cancelled", "Duplicate of SO-1023", "2026-03-25"],
];

// SO-1003 is held by a finance review: every action on it fails with
// ORDER_LOCKED, whoever asks.
const locks = {
  "SO-1003": "Held by finance review until the credit check clears",
};

// seedOrders returns a fresh, mutable copy of the seed orders.
export function seedOrders() {
  return rows.map(([customer, amount, status, note, placed], i) => {
    const id = `SO-${1001 + i}`;
    return {
      id,
      customer,
      amount,
      currency: "EUR",
      status,
      note,
      placed,
      lockedReason: locks[id] || "",
      approval: status === "approved" ? "granted" : "",
    };
  });
}
